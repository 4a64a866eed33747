/**
 * Collects the diagnostics of one configuration file and turns YAML offsets into the 1-based
 * line and column every diagnostic carries.
 */
import type { LineCounter, Node } from 'yaml';
import type { Diagnostic, Severity } from './diagnostic.ts';

/** A place in the file: a YAML node (its start) or a 0-based offset. */
export type Place = Node | number | null | undefined;

/** Accumulates diagnostics in the order they are found. */
export class Reporter {
  readonly file: string;
  readonly diagnostics: Diagnostic[] = [];
  /** How many of {@link diagnostics} are errors. */
  errorCount = 0;
  private readonly lineCounter: LineCounter;

  constructor(file: string, lineCounter: LineCounter) {
    this.file = file;
    this.lineCounter = lineCounter;
  }

  /** Records an error: the configuration will not be used. */
  error(place: Place, configPath: string, message: string): void {
    this.errorCount++;
    this.add('error', place, configPath, message);
  }

  /** Records a warning: reported, but the configuration is still used. */
  warning(place: Place, configPath: string, message: string): void {
    this.add('warning', place, configPath, message);
  }

  /** The 1-based line and column of a 0-based offset (never below 1:1). */
  position(offset: number): { line: number; column: number } {
    const { line, col } = this.lineCounter.linePos(Math.max(0, offset));
    return { line: Math.max(1, line), column: Math.max(1, col) };
  }

  private add(severity: Severity, place: Place, configPath: string, message: string): void {
    const offset = typeof place === 'number' ? place : (place?.range?.[0] ?? 0);
    const { line, column } = this.position(offset);
    this.diagnostics.push({ severity, message, configPath, file: this.file, line, column });
  }
}
