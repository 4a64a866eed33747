/**
 * `endpoint-sync sign`: seals an event with a tenant's signing key, exactly as the forwarder
 * does, so that a hand-written event sent with `aws lambda invoke` (to `npm start`, or to a test
 * deployment) is accepted instead of answered `unsigned-event`. Reads files only.
 */
import { parseEvent } from '../../contract/index.ts';
import { parseForwarderKey, SigningKeyError, signEvent } from '../../tenancy/index.ts';
import { type Command, UsageError } from '../command.ts';
import { stringFlag } from '../inputs.ts';

const usage = `Usage: endpoint-sync sign --key-file FILE [--event FILE]

Seals an event (the version 2 event of docs/contracts.md) with a tenant's signing key, as the
forwarder does, and prints the signed event as one line of JSON on stdout: a payload for
"aws lambda invoke --payload fileb://signed.json". The function accepts it for five minutes
(its replay window), once.

Flags:
  -k, --key-file FILE  the forwarder's key file, {"tenant": ..., "keyId": ..., "key": "<base64>"}
                       (the forward command's --signing-key-file); npm start prints where the
                       local tenant's key file is
  -e, --event FILE     the event JSON ("-" or no flag: standard input)
  -h, --help           show this help

An event the function would refuse (a missing field, an unknown version) is still signed, so
that refusals can be tried too; each reason is printed to stderr as "warning: ...".

Exit status: 0 when the event was signed; 1 when the key file cannot be read or is not a key,
or the event is not JSON.

Example:
  endpoint-sync sign --key-file /tmp/endpoint-sync-dev-uG6cHI/signing-key.json --event event.json > signed.json
  aws --endpoint-url http://127.0.0.1:3002 lambda invoke --function-name endpoint-sync-dev-sync --payload fileb://signed.json out.json
`;

const sign: Command = {
  summary: 'sign an event with a tenant key, as the forwarder does (for aws lambda invoke)',
  usage,
  options: {
    'key-file': { type: 'string', short: 'k' },
    event: { type: 'string', short: 'e' },
  },
  async run(values, _positionals, io) {
    const keyFile = stringFlag(values, 'key-file');
    const eventFile = stringFlag(values, 'event', '-');
    let keyText: string;
    try {
      keyText = await io.readFile(keyFile);
    } catch (err) {
      throw new UsageError(`cannot read --key-file ${keyFile}: ${(err as Error).message}`);
    }
    let key: ReturnType<typeof parseForwarderKey>;
    try {
      key = parseForwarderKey(keyText, keyFile);
    } catch (err) {
      // The key error names the file and the field, never the key.
      if (err instanceof SigningKeyError) throw new UsageError(err.message);
      throw err;
    }
    const name = eventFile === '-' ? 'standard input' : eventFile;
    let eventText: string;
    try {
      eventText = await io.readFile(eventFile);
    } catch (err) {
      throw new UsageError(`cannot read --event ${eventFile}: ${(err as Error).message}`);
    }
    let event: unknown;
    try {
      event = JSON.parse(eventText);
    } catch {
      // JSON.parse's message quotes the text; the position is enough.
      throw new UsageError(`the event in ${name} is not JSON; write one JSON object`);
    }
    const parsed = parseEvent(event);
    if (!parsed.ok)
      io.stderr.write(`warning: the function will refuse this event: ${parsed.error.message}\n`);
    else {
      for (const [index, reason] of parsed.itemErrors) {
        io.stderr.write(`warning: the function will refuse items[${index}]: ${reason}\n`);
      }
    }
    // Signed as compact JSON: the signature covers the exact text, so the text sent is the one
    // signed, whatever spacing the file had.
    io.stdout.write(`${JSON.stringify(signEvent(JSON.stringify(event), key))}\n`);
    return 0;
  },
};

export default sign;
