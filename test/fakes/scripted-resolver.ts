import { HostResolver, ResolvedAddress } from '../../src/application/ports/host-resolver';

/** Answers names from a table the test changes; unknown names do not resolve. */
export class ScriptedResolver extends HostResolver {
  readonly answers = new Map<string, ResolvedAddress[]>();
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    const found = this.answers.get(hostname);
    if (!found) throw new Error(`ENOTFOUND ${hostname}`);
    return found;
  }
}
