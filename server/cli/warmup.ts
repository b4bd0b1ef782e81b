/**
 * `admin warmup ...`: the warm-up pool's operator commands. Pool-only mailboxes take part in warm-up only
 * (they receive, read, rescue and answer warm-up mail, never campaigns), so a deployment with few accounts
 * still gives each one partners; `ban` excludes an account from the pool for good.
 */
import { Command, InvalidArgumentError } from 'commander';
import type { CliContext } from './context';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InvalidArgumentError('expected a port number');
  return n;
}

export function registerWarmupCommands(
  program: Command,
  withContext: <A extends unknown[]>(
    fn: (ctx: CliContext, ...args: A) => Promise<void>,
  ) => (...args: A) => Promise<void>,
): void {
  const warmup = program.command('warmup').description('the warm-up pool');
  const mailbox = warmup
    .command('mailbox')
    .description('pool-only mailboxes (warm-up partners that never send campaigns)');
  mailbox
    .command('add')
    .description('add a pool-only mailbox (SMTP and IMAP login; the password is stored encrypted)')
    .requiredOption('--email <email>', 'the mailbox address')
    .requiredOption('--password <password>', 'the SMTP password (and IMAP, unless --imap-password)')
    .requiredOption('--smtp-host <host>', 'SMTP host')
    .option('--smtp-port <port>', 'SMTP port', port, 587)
    .requiredOption('--imap-host <host>', 'IMAP host')
    .option('--imap-port <port>', 'IMAP port', port, 993)
    .option('--username <name>', 'login name, when not the address')
    .option('--imap-password <password>', 'the IMAP password, when it differs')
    .action(
      withContext(
        async (
          { services },
          o: {
            email: string;
            password: string;
            smtpHost: string;
            smtpPort: number;
            imapHost: string;
            imapPort: number;
            username?: string;
            imapPassword?: string;
          },
        ) => {
          const row = await services.warmup.addMailbox(o);
          console.log(`Pool mailbox ${row.email} added: ${row.id}`);
        },
      ),
    );
  mailbox
    .command('list')
    .description('list pool-only mailboxes with their status')
    .action(
      withContext(async ({ services }) => {
        for (const m of await services.warmup.mailboxes())
          console.log(`${m.id}  ${m.email}  ${m.status}${m.status_reason ? `  (${m.status_reason})` : ''}`);
      }),
    );
  mailbox
    .command('remove <idOrEmail>')
    .description('remove a pool-only mailbox')
    .action(
      withContext(async ({ services }, idOrEmail: string) => {
        await services.warmup.removeMailbox(idOrEmail);
        console.log(`Pool mailbox ${idOrEmail} removed.`);
      }),
    );
  warmup
    .command('ban <accountId>')
    .description('exclude an account from the warm-up pool for good (status banned, reason banned_by_operator)')
    .requiredOption('--reason <text>', 'why, shown to the account owner')
    .action(
      withContext(async ({ services }, accountId: string, o: { reason: string }) => {
        await services.warmup.ban(accountId, o.reason);
        console.log(`Account ${accountId} banned from the warm-up pool.`);
      }),
    );
}
