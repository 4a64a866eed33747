/**
 * Which forwarder shard owns which namespace: rendezvous hashing (highest random weight) over the
 * sorted identities of the live members. Every member computes the same owner from the same
 * member list, with no coordination, and the assignment moves as little as possible:
 *
 * - adding a member moves to it only the namespaces it now wins (about 1/(N+1) of them); no
 *   namespace moves between the members that were already there;
 * - removing a member moves only its own namespaces, spread over the others.
 *
 * The ring id (a hash of the sorted identities) names one membership, so replicas can say which
 * assignment they have adopted (`shards.ts`).
 */
import { sha256Hex } from '../naming/index.ts';

/** The weight of `member` for `namespace`: 52 bits of SHA-256, an exact JavaScript integer. */
function weight(member: string, namespace: string): number {
  return Number.parseInt(sha256Hex(`${member}\u0000${namespace}`).slice(0, 13), 16);
}

/** The id of the membership `members` (order does not matter): 16 hex digits of SHA-256. */
export function ringId(members: readonly string[]): string {
  return sha256Hex([...members].sort().join('\n')).slice(0, 16);
}

/**
 * The owner of `namespace` among `members`: the member of highest weight (ties, which need a
 * 52-bit collision, go to the greater identity). Undefined when there are no members.
 */
export function ownerOf(namespace: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const member of members) {
    const w = weight(member, namespace);
    if (w > bestWeight || (w === bestWeight && best !== undefined && member > best)) {
      best = member;
      bestWeight = w;
    }
  }
  return best;
}

/**
 * One membership and its assignment. Owners are remembered per namespace (a forwarder asks for
 * the same few thousand namespaces again and again; a new membership is a new ring).
 */
export class ShardRing {
  /** The member identities, sorted. */
  readonly members: readonly string[];
  /** {@link ringId} of the members. */
  readonly id: string;
  readonly #owners = new Map<string, string | undefined>();

  constructor(members: Iterable<string>) {
    this.members = [...new Set(members)].sort();
    this.id = ringId(this.members);
  }

  /** The owner of `namespace` (undefined for an empty ring). */
  owner(namespace: string): string | undefined {
    if (this.#owners.has(namespace)) return this.#owners.get(namespace);
    const owner = ownerOf(namespace, this.members);
    this.#owners.set(namespace, owner);
    return owner;
  }

  /** Whether `member` belongs to this ring. */
  has(member: string): boolean {
    return this.members.includes(member);
  }
}
