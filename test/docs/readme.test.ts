/**
 * The README's examples are run, so the front page never lies: the configuration it shows
 * validates, and the render output it shows is what `render` prints.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { bufferIO } from '../cli/buffer-io.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The fenced block of `lang` that follows the first occurrence of `marker`. */
function blockAfter(marker: string, lang: string): string {
  const at = readme.indexOf(marker);
  expect(at, `README has "${marker}"`).toBeGreaterThanOrEqual(0);
  const open = readme.indexOf(`\`\`\`${lang}\n`, at);
  const body = open + lang.length + 4;
  return readme.slice(body, readme.indexOf('```', body));
}

/** Lines of a README excerpt, without the `...` elisions. */
function shownLines(block: string): string[] {
  return block.split('\n').filter((l) => l.trim() !== '' && l.trim() !== '...');
}

describe('README', () => {
  it('shows a configuration that validates', async () => {
    const config = blockAfter('### The configuration file', 'yaml');
    const io = bufferIO({ 'readme.yaml': config });
    expect(await main(['validate', '--config', 'readme.yaml'], io)).toBe(0);
  });

  it('shows the host copy and the explain lines that render really prints', async () => {
    const io = bufferIO();
    const code = await main(
      [
        'render',
        '--config',
        'examples/endpoints.yaml',
        '--object',
        'examples/objects/db-endpoints.yaml',
        '--explain',
      ],
      io,
    );
    expect(code).toBe(0);
    const stdout = io.out.split('\n');
    for (const line of shownLines(blockAfter('prints the host copy', 'yaml'))) {
      expect(stdout, `render prints "${line}"`).toContain(line);
    }
    const stderr = io.err.split('\n');
    for (const line of shownLines(blockAfter('what each patch did on stderr', ''))) {
      expect(stderr, `--explain prints "${line}"`).toContain(line);
    }
  });

  it('shows the lines endpoint-sync test really prints for the shipped example tests', async () => {
    const io = bufferIO();
    expect(await main(['test', 'examples/tests/'], io)).toBe(0);
    const stdout = io.out.split('\n');
    const shown = shownLines(blockAfter('### Test a configuration', 'text'));
    for (const line of shown.slice(0, -1)) expect(stdout, `test prints "${line}"`).toContain(line);
    // The summary's time differs from run to run.
    const summary = shown.at(-1)!.replace(/\d+ ms/, 'N ms');
    expect(stdout.map((l) => l.replace(/\d+ ms/, 'N ms'))).toContain(summary);
  });
});
