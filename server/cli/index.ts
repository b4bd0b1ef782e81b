/**
 * The admin CLI: `npm run admin -- <command>`. Commands call services, except the bulk lead commands
 * (cli/leads.ts), which hand the database to the leads module's generator and CSV importer (they write in
 * batches of their own transactions); all use the same DATABASE_URL / DATA_DIR as the server.
 */
import { Command } from 'commander';
import { describeDemoWeek, makeDemoWeek } from '../demo';
import { openCliContext, type CliContext } from './context';
import { displayName, email, id, table, wholeNumber } from './args';
import { registerLeadCommands } from './leads';
import { registerWarmupCommands } from './warmup';
import { causeOutsideRequests, causing } from '../platform/cause';

/** The most credits one `credits add` grants: a typo's extra digits are refused, not granted. */
const MAX_GRANT = 1_000_000_000;

/** Opens the database for one command, runs it, closes it; errors become one clear line and exit 1. */
export function withContext<A extends unknown[]>(fn: (ctx: CliContext, ...args: A) => Promise<void>) {
  return async (...args: A): Promise<void> => {
    const ctx = await openCliContext();
    try {
      // What the command changes is the operator's doing (the credit ledger, the audit log name the command).
      const operation = commandPath(args[args.length - 1]);
      await causing(causeOutsideRequests('admin', operation), () => fn(ctx, ...args));
    } finally {
      await ctx.close();
    }
  };
}

/** `key revoke`: the command commander hands an action last, named from below the program. */
function commandPath(command: unknown): string {
  const names: string[] = [];
  for (let c = command instanceof Command ? command : null; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ') || 'admin';
}

export function buildProgram(): Command {
  const program = new Command('admin').description('Administer the outreach and lead API');

  const workspace = program.command('workspace').description('workspaces and their first API key');
  workspace
    .command('create')
    .description('create a workspace and print its id and a new API key (shown once)')
    .requiredOption('--name <name>', 'workspace name', displayName)
    .option('--email <email>', 'contact email of the workspace owner', email)
    .option('--whitelabel', 'allow the whitelabel operations', false)
    .option('--json', 'print exactly one JSON object { workspaceId, apiKey }', false)
    .action(
      withContext(async ({ services }, opts: { name: string; email?: string; whitelabel: boolean; json: boolean }) => {
        const created = await services.workspaces.createWorkspace({
          name: opts.name,
          email: opts.email,
          whitelabel: opts.whitelabel,
        });
        if (opts.json) {
          console.log(JSON.stringify({ workspaceId: created.workspace.id, apiKey: created.apiKey }));
          return;
        }
        console.log(`Workspace ${created.workspace.name} created: ${created.workspace.id}`);
        console.log(`API key (shown once): ${created.apiKey}`);
        console.log(`Credits: ${created.workspace.credit_balance}`);
      }),
    );
  workspace
    .command('list')
    .description('list workspaces')
    .option('--json', 'print JSON', false)
    .action(
      withContext(async ({ services }, opts: { json: boolean }) => {
        const rows = await services.workspaces.list();
        const view = rows.map((w) => ({
          id: w.id,
          name: w.name,
          plan: w.plan_name,
          whitelabel: w.whitelabel_enabled,
          credits: w.credit_balance,
          activeKeys: w.active_keys,
          parentWorkspaceId: w.parent_workspace_id,
          createdAt: w.created_at.toISOString(),
        }));
        if (opts.json) console.log(JSON.stringify(view));
        else if (view.length === 0) console.log('No workspaces.');
        else
          console.log(
            table(
              view.map((w) => ({
                id: w.id,
                name: w.name,
                plan: w.plan,
                credits: w.credits,
                'active keys': w.activeKeys,
                whitelabel: w.whitelabel ? 'yes' : 'no',
                parent: w.parentWorkspaceId,
                created: w.createdAt.slice(0, 16).replace('T', ' '),
              })),
            ),
          );
      }),
    );

  const key = program.command('key').description('API keys');
  key
    .command('create')
    .description('create an API key for a workspace (shown once)')
    .requiredOption('--workspace <id>', 'workspace id', id('a workspace'))
    .option('--name <name>', 'a label for the key', displayName)
    .option('--json', 'print exactly one JSON object { keyId, apiKey }', false)
    .action(
      withContext(async ({ services }, opts: { workspace: string; name?: string; json: boolean }) => {
        const issued = await services.workspaces.createKey(opts.workspace, opts.name ?? null);
        if (opts.json) console.log(JSON.stringify(issued));
        else console.log(`Key ${issued.keyId} created. API key (shown once): ${issued.apiKey}`);
      }),
    );
  key
    .command('list')
    .description('list API keys (never their secrets)')
    .option('--workspace <id>', 'only this workspace')
    .option('--json', 'print JSON', false)
    .action(
      withContext(async ({ services }, opts: { workspace?: string; json: boolean }) => {
        const { items: rows } = await services.keys.list(opts.workspace ?? null, { limit: 1000, skip: 0 });
        const view = rows.map((k) => ({
          id: k.id,
          workspaceId: k.workspace_id,
          name: k.name,
          prefix: k.key_prefix,
          createdAt: k.created_at.toISOString(),
          lastUsedAt: k.last_used_at?.toISOString() ?? null,
          revokedAt: k.revoked_at?.toISOString() ?? null,
        }));
        if (opts.json) console.log(JSON.stringify(view));
        else if (view.length === 0) console.log('No API keys.');
        else console.table(view);
      }),
    );
  key
    .command('revoke')
    .description('revoke an API key; requests with it answer 401 at once')
    .argument('<idOrPrefix>', 'the key id, or the prefix that key list shows')
    .action(
      withContext(async ({ services }, idOrPrefix: string) => {
        const found = await services.keys.findForAdmin(idOrPrefix);
        await services.workspaces.revokeKey(found.id);
        console.log(`Key ${found.id} (${found.key_prefix}) revoked.`);
      }),
    );

  program
    .command('credits')
    .description('credit balances')
    .command('add')
    .description('grant credits to a workspace (written to the ledger)')
    .requiredOption('--workspace <id>', 'workspace id', id('a workspace'))
    .requiredOption('--amount <n>', 'credits to add (1 to 1,000,000,000)', wholeNumber(1, MAX_GRANT))
    .action(
      withContext(async ({ services, deps }, opts: { workspace: string; amount: number }) => {
        const balance = await deps.db.transaction((trx) =>
          services.credits.grant(trx, opts.workspace, opts.amount, 'admin_grant'),
        );
        console.log(`Added ${opts.amount} credits. Balance: ${balance}.`);
      }),
    );

  program
    .command('demo')
    .description(
      'fill a workspace with the demo week: a campaign mailed to 48 contacts over the past seven days, its opens, ' +
        'clicks, replies and analytics (a new "Demo workspace" without --workspace)',
    )
    .option('--workspace <id>', 'the workspace to fill', id('a workspace'))
    .action(
      withContext(async ({ services, deps }, opts: { workspace?: string }) => {
        const created = opts.workspace
          ? null
          : await services.workspaces.createWorkspace({ name: 'Demo workspace', whitelabel: true });
        const workspaceId = opts.workspace ?? created!.workspace.id;
        const week = await makeDemoWeek(deps, workspaceId);
        if (created)
          console.log(
            `Workspace ${created.workspace.name} created: ${workspaceId}\nAPI key (shown once): ${created.apiKey}`,
          );
        console.log(`Made ${describeDemoWeek(week)}`);
      }),
    );

  registerLeadCommands(program, openCliContext);
  registerWarmupCommands(program, withContext);

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(
      withContext(({ migrations }) => {
        // Opening the database for a command applies what is pending.
        console.log(`database ready: ${migrations.total} migrations, ${migrations.applied.length} applied`);
        return Promise.resolve();
      }),
    );
  return program;
}

/**
 * What a failed command prints: its message, in one line. A database error names the statement in its message
 * (knex's `<sql> - <reason>`): only the reason is shown.
 */
export function failureLine(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const sqlstate = (err as { code?: unknown }).code;
  const reason =
    typeof sqlstate === 'string' && /^[0-9A-Z]{5}$/.test(sqlstate) ? err.message.split(' - ').pop() : err.message;
  return (reason ?? err.message).split('\n')[0];
}

if (require.main === module) {
  buildProgram()
    .parseAsync(process.argv)
    .catch((err: unknown) => {
      console.error(`error: ${failureLine(err)}`);
      process.exit(1);
    });
}
