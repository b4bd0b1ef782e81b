/**
 * A DNS server on 127.0.0.1 (dns2's UDP server) that answers from an in-memory zone, so vitals and
 * verification tests never touch the internet:
 *
 *   const dns = await startDnsServer({
 *     'acme.io': { MX: [{ exchange: 'mx.acme.io', priority: 10 }], TXT: ['v=spf1 include:_spf.google.com ~all'] },
 *     '_dmarc.acme.io': { TXT: ['v=DMARC1; p=reject'] },
 *   });
 *   t = await startTestServer({ config: { dnsServers: [dns.address], dnsTimeoutMs: 300 } });
 *   ...
 *   await dns.close();
 *
 * A name missing from the zone answers NXDOMAIN; a name present without the asked type answers no
 * records (NODATA). `mode: 'silent'` never answers (timeouts), `mode: 'servfail'` answers SERVFAIL.
 * The zone can be changed between requests (`dns.zone[name] = ...`); `dns.queries` logs what was asked.
 */
import dns2 from 'dns2';

const { Packet } = dns2;

export interface ZoneEntry {
  A?: string[];
  /** The name's canonical name (answered to CNAME questions; A and MX questions still read this entry). */
  CNAME?: string;
  MX?: { exchange: string; priority: number }[];
  /** One string per TXT record; a string[] is one record split in several character-strings. */
  TXT?: (string | string[])[];
}

export type Zone = Record<string, ZoneEntry>;

export interface DnsServerOptions {
  mode?: 'answer' | 'silent' | 'servfail';
}

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for config.dnsServers. */
  address: string;
  port: number;
  zone: Zone;
  mode: NonNullable<DnsServerOptions['mode']>;
  queries: { name: string; type: string }[];
  close(): Promise<void>;
}

const TYPE_NAMES: Record<number, string> = {
  [Packet.TYPE.A]: 'A',
  [Packet.TYPE.MX]: 'MX',
  [Packet.TYPE.TXT]: 'TXT',
  [Packet.TYPE.CNAME]: 'CNAME',
};
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;

export async function startDnsServer(zone: Zone = {}, options: DnsServerOptions = {}): Promise<TestDnsServer> {
  const server = dns2.createUDPServer();
  const state: TestDnsServer = {
    address: '',
    port: 0,
    zone,
    mode: options.mode ?? 'answer',
    queries: [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const lookup = (name: string): ZoneEntry | undefined => {
    const key = Object.keys(state.zone).find((k) => k.toLowerCase() === name.toLowerCase());
    return key === undefined ? undefined : state.zone[key];
  };

  server.on(
    'request',
    (request: InstanceType<typeof Packet>, send: (response: InstanceType<typeof Packet>) => void) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const type = TYPE_NAMES[question.type] ?? String(question.type);
      state.queries.push({ name: question.name, type });
      if (state.mode === 'silent') return;
      if (state.mode === 'servfail') {
        response.header.rcode = RCODE_SERVFAIL;
        send(response);
        return;
      }
      const entry = lookup(question.name);
      if (!entry) {
        response.header.rcode = RCODE_NXDOMAIN;
        send(response);
        return;
      }
      const base = { name: question.name, class: Packet.CLASS.IN, ttl: 60 };
      if (type === 'A')
        for (const address of entry.A ?? []) response.answers.push({ ...base, type: Packet.TYPE.A, address } as never);
      if (type === 'MX')
        for (const mx of entry.MX ?? []) response.answers.push({ ...base, type: Packet.TYPE.MX, ...mx } as never);
      if (type === 'CNAME' && entry.CNAME)
        response.answers.push({ ...base, type: Packet.TYPE.CNAME, domain: entry.CNAME } as never);
      if (type === 'TXT')
        for (const data of entry.TXT ?? []) response.answers.push({ ...base, type: Packet.TYPE.TXT, data } as never);
      send(response);
    },
  );

  await server.listen(0, '127.0.0.1');
  state.port = (server.address() as { port: number }).port;
  state.address = `127.0.0.1:${state.port}`;
  return state;
}
