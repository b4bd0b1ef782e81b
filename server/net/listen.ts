/**
 * Listening on a configured port: a port that cannot be taken (in use, not permitted) is one line naming the
 * port and the setting that chose it, instead of Node's `EADDRINUSE` stack or a null `server.address()`.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens and answers the port taken (`port` 0 picks a free one); `setting` names what chose the port. */
export function listen(
  server: Server,
  {
    port,
    host,
    setting,
    hostSetting,
  }: { port: number; host: string | undefined; setting: string; hostSetting: string },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      server.off('listening', listening);
      const where = host ? `port ${port} on ${host}` : `port ${port}`;
      const retry = `stop the other process or set ${setting} to another port`;
      const lines: Record<string, string> = {
        EADDRINUSE: `${where} is already in use (${setting}): ${retry}`,
        EACCES: `${where} is not permitted for this user (${setting}): use a port above 1023`,
        EADDRNOTAVAIL: `${host} is not an address of this machine (${hostSetting})`,
      };
      reject(new Error(lines[err.code ?? ''] ?? `cannot listen on ${where} (${setting}): ${err.message}`));
    };
    const listening = () => {
      server.off('error', failed);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', failed);
    server.once('listening', listening);
    server.listen(port, host);
  });
}
