/**
 * Service cluster IPs and node ports, allocated as the real server's allocators do: from
 * kube-apiserver's default range 10.96.0.0/12 in order (wrapping around to free addresses), a
 * requested IP refused while another Service holds it, `None` for headless Services, nothing for
 * ExternalName, node ports from 30000. A full range is the real server's 500 ("failed to allocate
 * a serviceIP: range is full"), never an endless search.
 */
import { type FieldError, fieldErr, internalError } from './errors.ts';

type Obj = Record<string, unknown>;

/** Addresses of 10.96.0.0/12 a Service can get: all but the network and broadcast address. */
const RANGE_SIZE = (1 << 20) - 2;

/** The `n`th address of 10.96.0.0/12 (1-based). */
function addressOf(n: number): string {
  return `10.${96 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`;
}

/** The cluster IPs and node ports in use in one store. */
export class ServiceIPs {
  readonly #clusterIPs = new Set<string>();
  readonly #rangeSize: number;
  #nextIP = 1;

  /** `rangeSize`: how many addresses of the range are given out (tests use a small one). */
  constructor(rangeSize = RANGE_SIZE) {
    this.#rangeSize = Math.min(rangeSize, RANGE_SIZE);
  }
  #nextNodePort = 30000;

  /** Fills `spec`'s cluster IPs, families and node ports; a taken IP is pushed to `errs`. */
  allocate(spec: Obj, errs: FieldError[]): void {
    if (spec.type === 'ExternalName') {
      delete spec.clusterIP;
      delete spec.clusterIPs;
      return;
    }
    const requested = typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
    if (requested === 'None') {
      spec.clusterIPs = ['None'];
    } else if (requested) {
      if (this.#clusterIPs.has(requested)) {
        errs.push(
          fieldErr.invalid(
            'spec.clusterIPs',
            [requested],
            `failed to allocate IP ${requested}: provided IP is already allocated`,
          ),
        );
        return;
      }
      spec.clusterIPs = [requested];
    } else {
      const ip = this.#nextFree();
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
    }
    if (!spec.ipFamilies) spec.ipFamilies = ['IPv4'];
    if (!spec.ipFamilyPolicy) spec.ipFamilyPolicy = 'SingleStack';
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
      for (const p of (spec.ports as Obj[] | undefined) ?? []) {
        if (!p.nodePort) p.nodePort = this.#nextNodePort++;
      }
    }
  }

  /** The next free address after the last one given, wrapping around; throws when none is. */
  #nextFree(): string {
    for (let tried = 0; tried < this.#rangeSize; tried++) {
      const n = this.#nextIP;
      this.#nextIP = n === this.#rangeSize ? 1 : n + 1;
      const ip = addressOf(n);
      if (!this.#clusterIPs.has(ip)) return ip;
    }
    throw internalError('failed to allocate a serviceIP: range is full');
  }

  /** Marks the cluster IP of Service `o` as used (`claim`) or free again. */
  claim(o: Obj, claim: boolean): void {
    const ip = (o.spec as Obj | undefined)?.clusterIP;
    if (typeof ip === 'string' && ip && ip !== 'None') {
      if (claim) this.#clusterIPs.add(ip);
      else this.#clusterIPs.delete(ip);
    }
  }
}
