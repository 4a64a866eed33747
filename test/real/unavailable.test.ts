/**
 * Stands in for the `real` project when its programs are missing (vitest.config.ts): the run says
 * so by name, and how to build them, instead of passing in silence.
 */
import { it } from 'vitest';

it.skip(`real control plane suite: ${process.env.REAL_UNAVAILABLE ?? 'unavailable'}`, () => {});
