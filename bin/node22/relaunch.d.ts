/** Types of relaunch.js (plain JavaScript, so that it runs on the old Node it replaces). */

export const STOP_SIGNALS: readonly string[];
export const REPEAT_MS: number;
export function inTerminalForeground(): boolean;
export function withNodeFirstOnPath(
  env: Record<string, string | undefined>,
  dir: string,
): Record<string, string | undefined>;
export function relaunch(
  node: string,
  script: string,
  args: string[],
  options?: { execArgv?: string[]; env?: NodeJS.ProcessEnv; foreground?: boolean },
): Promise<never>;
