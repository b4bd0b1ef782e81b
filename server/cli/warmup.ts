/**
 * `admin warmup ...`: the warm-up pool's operator commands. Pool-only mailboxes take part in warm-up only
 * (they receive, read, rescue and answer warm-up mail, never campaigns), so a deployment with few accounts
 * still gives each one partners; `ban` excludes an account from the pool for good.
 */
import { Command, InvalidArgumentError } from 'commander';
import { OutboundRefusedError, resolveAllowedAddress } from '../net/outbound';
import { email, host, id, port, table } from './args';
import type { NewPoolMailbox } from '../modules/warmup';
import type { CliContext } from './context';

/** The outbound rule, asked when the mailbox is added: a host it would refuse at every send is refused now. */
async function allowedHost(option: string, value: string, allowPrivate: boolean): Promise<void> {
  try {
    await resolveAllowedAddress(value, { allowPrivate });
  } catch (err) {
    const why =
      err instanceof OutboundRefusedError
        ? `${err.message} (ALLOW_PRIVATE_MAIL_HOSTS=1 allows them)`
        : `the name does not resolve (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`;
    throw new InvalidArgumentError(`${option} ${value}: ${why}`);
  }
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
    .requiredOption('--email <email>', 'the mailbox address', email)
    .requiredOption('--password <password>', 'the SMTP password (and IMAP, unless --imap-password)')
    .requiredOption('--smtp-host <host>', 'SMTP host', host)
    .option('--smtp-port <port>', 'SMTP port', port, 587)
    .requiredOption('--imap-host <host>', 'IMAP host', host)
    .option('--imap-port <port>', 'IMAP port', port, 993)
    .option('--username <name>', 'login name, when not the address')
    .option('--imap-password <password>', 'the IMAP password, when it differs')
    .action(
      withContext(async ({ services, deps }, o: NewPoolMailbox) => {
        const allowPrivate = deps.config.allowPrivateMailHosts;
        await allowedHost('--smtp-host', o.smtpHost, allowPrivate);
        await allowedHost('--imap-host', o.imapHost, allowPrivate);
        const row = await services.warmup.addMailbox(o);
        console.log(`Pool mailbox ${row.email} added: ${row.id}`);
      }),
    );
  mailbox
    .command('list')
    .description('list pool-only mailboxes with their status')
    .option('--json', 'print JSON', false)
    .action(
      withContext(async ({ services }, o: { json: boolean }) => {
        const rows = (await services.warmup.mailboxes()).map((m) => ({
          id: m.id,
          email: m.email,
          status: m.status,
          reason: m.status_reason,
        }));
        if (o.json) console.log(JSON.stringify(rows));
        else console.log(rows.length ? table(rows) : 'No pool mailboxes.');
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
    .command('ban')
    .argument('<accountId>', 'the email account id', id('an account'))
    .description('exclude an account from the warm-up pool for good (status banned, reason banned_by_operator)')
    .requiredOption('--reason <text>', 'why, shown to the account owner')
    .action(
      withContext(async ({ services }, accountId: string, o: { reason: string }) => {
        await services.warmup.ban(accountId, o.reason);
        console.log(`Account ${accountId} banned from the warm-up pool.`);
      }),
    );
}
