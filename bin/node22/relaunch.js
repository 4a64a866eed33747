/**
 * Runs a script with another Node and becomes its stand-in: same arguments, same terminal, its
 * exit code or signal as this process's own, and the stop signals it would have had.
 *
 * Signals must arrive exactly once: the long-running commands drain on the first SIGINT or
 * SIGTERM and die on the second. A terminal's Ctrl-C, a closed terminal and `timeout` signal the
 * whole process group, the child included, so in the terminal's foreground group this process
 * only swallows them and waits. Anywhere else (CI, a pipeline, a background job) the child gets a
 * process group of its own and this process is its only source of signals: it passes each one
 * on, counting repeats within a moment (npm relays what the group already got) as one.
 *
 * Plain JavaScript on purpose: this file runs on the old Node it replaces.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { delimiter, dirname } from 'node:path';

/** The signals that stop a command; the others keep their default effect on both processes. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

/** Repeats of one signal closer together than this are one event (group delivery plus npm's relay). */
export const REPEAT_MS = 250;

/**
 * Whether this process is in the foreground process group of its terminal, so the terminal's
 * signals reach a child in the same group without help. Linux reads it from /proc; elsewhere a
 * terminal on stdin is taken as yes.
 */
export function inTerminalForeground() {
  if (process.platform === 'linux') {
    try {
      const stat = readFileSync('/proc/self/stat', 'utf8');
      // Fields after the command name, which may itself hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pgrp = Number(fields[2]);
      const tpgid = Number(fields[5]);
      return tpgid > 0 && tpgid === pgrp;
    } catch {
      // no /proc: fall through
    }
  }
  return Boolean(process.stdin.isTTY);
}

/**
 * `env` with `dir` first on PATH, so what the child starts as `node` (npm's own shims, tools that
 * spawn `node` by name) is the same Node.
 */
export function withNodeFirstOnPath(env, dir) {
  const key = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH';
  const rest = env[key];
  return { ...env, [key]: rest ? `${dir}${delimiter}${rest}` : dir };
}

/**
 * Runs `node [execArgv] script args` and ends this process the way the child ends. Never
 * resolves: this process exits when the child does.
 */
export function relaunch(node, script, args, options = {}) {
  const {
    execArgv = process.execArgv,
    env = process.env,
    foreground = process.platform === 'win32' || inTerminalForeground(),
  } = options;
  return new Promise(() => {
    const child = spawn(node, [...execArgv, script, ...args], {
      stdio: 'inherit',
      env: withNodeFirstOnPath(env, dirname(node)),
      // Own group only where this process relays every signal (never on Windows: no groups there).
      detached: !foreground,
    });
    const last = new Map();
    const onSignal = (signal) => {
      if (foreground) return; // the child got it from the terminal or the group already
      const now = Date.now();
      const previous = last.get(signal);
      last.set(signal, now);
      if (previous !== undefined && now - previous < REPEAT_MS) return;
      try {
        child.kill(signal);
      } catch {
        // already gone: its exit event ends this process
      }
    };
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
    const stopListening = () => {
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    };
    child.on('error', (error) => {
      stopListening();
      process.stderr.write(
        `endpoint-sync: could not start ${node} (${error.code}); delete ${dirname(dirname(node))} ` +
          'and run again to fetch it anew.\n',
      );
      process.exit(1);
    });
    child.on('exit', (code, signal) => {
      stopListening();
      if (signal) {
        // Die of the same signal, so whoever waits on this process sees what the child did.
        process.kill(process.pid, signal);
        setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 1)), 100);
        return;
      }
      process.exit(code ?? 1);
    });
  });
}
