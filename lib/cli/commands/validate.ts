/**
 * `endpoint-sync validate --config FILE`: checks a configuration file the way the functions load
 * it, prints every finding, and exits 1 when any is an error, so it can gate a deploy in CI.
 */
import { type Diagnostic, formatDiagnostic, hasErrors } from '../../config/diagnostic.ts';
import { unreadableFile } from '../../config/load-config-file.ts';
import { parseConfig } from '../../config/parse-config.ts';
import { OWNED_RESOURCES, type SyncConfig } from '../../config/types.ts';
import { vclusterDifferences } from '../../config/vcluster-differences.ts';
import { DEFAULT_MARKER_DOMAIN } from '../../naming/index.ts';
import { type Command, UsageError } from '../command.ts';

const usage = `Usage: endpoint-sync validate --config FILE [--vcluster [--marker-domain DOMAIN]]

Checks a configuration file: YAML syntax, the owned sections (sync.toHost.endpoints, services,
secrets, configMaps, namespaces, networking.advanced.clusterDomain), that every expression is one
valid JavaScript expression, that every path parses, and the patch rules. Prints every error and
warning to stderr as FILE:LINE:COLUMN: severity: message (config.path), and a summary line.

Flags:
  -c, --config FILE   the configuration file to check ("-" reads standard input)
      --vcluster      also list every field of a vcluster configuration that endpoint-sync
                      ignores or treats differently (as "warning: vcluster: ..." lines)
      --marker-domain DOMAIN
                      with --vcluster: the marker domain the deployment runs with
                      (default ${DEFAULT_MARKER_DOMAIN}); any other than vcluster's is listed
  -h, --help          show this help

Exit status: 0 when the file has no error (warnings allowed), 1 otherwise.

Example:
  endpoint-sync validate --config examples/endpoints.yaml
  examples/endpoints.yaml: valid (3 patches for endpoints, 1 warning)
`;

function plural(n: number, word: string, words = `${word}s`): string {
  return `${n} ${n === 1 ? word : words}`;
}

/** `3 patches for endpoints, 1 patch for secrets` or `no patches`. */
function patchSummary(config: SyncConfig): string {
  const parts = OWNED_RESOURCES.filter((r) => config.resources[r].patches.length > 0).map(
    (r) => `${plural(config.resources[r].patches.length, 'patch', 'patches')} for ${r}`,
  );
  return parts.length === 0 ? 'no patches' : parts.join(', ');
}

function countSummary(diagnostics: readonly Diagnostic[]): string {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.length - errors;
  const parts = errors > 0 ? [plural(errors, 'error')] : [];
  parts.push(warnings === 0 ? 'no warnings' : plural(warnings, 'warning'));
  return parts.join(', ');
}

const validate: Command = {
  summary: 'check a configuration file and print every error and warning',
  usage,
  options: {
    config: { type: 'string', short: 'c' },
    vcluster: { type: 'boolean' },
    'marker-domain': { type: 'string' },
  },
  async run(values, _positionals, io) {
    const file = values['config'];
    if (typeof file !== 'string' || file === '') {
      throw new UsageError('missing --config FILE (the configuration file to check); see --help');
    }
    const name = file === '-' ? '<stdin>' : file;
    let text: string;
    try {
      text = await io.readFile(file);
    } catch (err) {
      io.stderr.write(`${formatDiagnostic(unreadableFile(name, err))}\n`);
      io.stderr.write(`${name}: invalid (1 error)\n`);
      return 1;
    }
    const { config, diagnostics } = parseConfig(text, name);
    for (const d of diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
    if (config === undefined || hasErrors(diagnostics)) {
      io.stderr.write(`${name}: invalid (${countSummary(diagnostics)})\n`);
      return 1;
    }
    io.stdout.write(`${name}: valid (${patchSummary(config)}, ${countSummary(diagnostics)})\n`);
    if (values['vcluster'] === true) {
      const markerDomain = values['marker-domain'];
      const differences = vclusterDifferences(text, name, config, {
        markerDomain: typeof markerDomain === 'string' ? markerDomain : DEFAULT_MARKER_DOMAIN,
      });
      for (const d of differences) io.stderr.write(`${formatDiagnostic(d)}\n`);
      io.stdout.write(
        differences.length === 0
          ? `${name}: nothing in it is treated differently from vcluster\n`
          : `${name}: ${plural(differences.length, 'field')} treated differently from vcluster (see docs/vcluster-compatibility.md)\n`,
      );
    }
    return 0;
  },
};

export default validate;
