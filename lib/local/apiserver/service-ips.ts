/**
 * Service cluster IPs and node ports, allocated as the real server's allocators do: from
 * 10.96.0.0/16 in order, a requested IP refused while another Service holds it, `None` for
 * headless Services, nothing for ExternalName, node ports from 30000.
 */
import { type FieldError, fieldErr } from './errors.ts';

type Obj = Record<string, unknown>;

/** The cluster IPs and node ports in use in one store. */
export class ServiceIPs {
  readonly #clusterIPs = new Set<string>();
  #nextIP = 1;
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
      let ip = '';
      do {
        const n = this.#nextIP++;
        ip = `10.96.${(n >> 8) & 255}.${n & 255}`;
      } while (this.#clusterIPs.has(ip));
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

  /** Marks the cluster IP of Service `o` as used (`claim`) or free again. */
  claim(o: Obj, claim: boolean): void {
    const ip = (o.spec as Obj | undefined)?.clusterIP;
    if (typeof ip === 'string' && ip && ip !== 'None') {
      if (claim) this.#clusterIPs.add(ip);
      else this.#clusterIPs.delete(ip);
    }
  }
}
