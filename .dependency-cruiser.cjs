// The house written down (docs/architecture.md says the whole shape): imports point one way. `npm run lint` runs
// these rules over server/; test/ and scripts/ may reach anywhere they need to.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle ties two pieces so that neither can be understood, tested or moved without the other.',
      from: { path: '^server/' },
      to: { circular: true },
    },
    {
      name: 'platform-knows-no-module',
      severity: 'error',
      comment:
        'The platform (platform/, http/, db/, net/, text/, time/, observability/) knows no domain: a module plugs into it, never the reverse.',
      from: { path: '^server/(platform|http|db|net|text|time|observability)/' },
      to: { path: '^server/modules/' },
    },
    {
      name: 'mcp-knows-no-module',
      severity: 'error',
      comment:
        'The MCP server (mcp/) is an adapter over the app: a tool call is an API request, so it needs no domain code and never drifts from the API.',
      from: { path: '^server/mcp/' },
      to: { path: '^server/(modules/|services\\.ts$)' },
    },
    {
      name: 'no-module-imports-the-composition-root',
      severity: 'error',
      comment:
        'Only the composition root (services.ts) and the entry points know every module; a module is handed what it uses.',
      from: { path: '^server/modules/' },
      to: { path: '^server/(services|app|main|boot|demo|worker-main)\\.ts$' },
    },
    {
      name: 'no-foreign-store',
      severity: 'error',
      comment:
        "A module calls another module's service, never its stores (store.ts, intent-store.ts, any *store.ts): each table has one owner.",
      from: { path: '^server/modules/([^/]+)/' },
      to: { path: '^server/modules/[^/]+/[^/]*store\\.ts$', pathNot: '^server/modules/$1/' },
    },
    {
      name: 'modules-meet-through-faces',
      severity: 'error',
      comment:
        'A module uses another only through its face (index.ts): what it exports is what others may rely on; the rest of the folder can change freely.',
      from: { path: '^server/modules/([^/]+)/' },
      to: { path: '^server/modules/[^/]+/', pathNot: ['^server/modules/$1/', '^server/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'only-routes-speak-http',
      severity: 'error',
      comment:
        "A module's routes.ts is its one file that knows HTTP: services throw the domain's errors (server/platform/errors.ts) and answer pages (server/platform/paging.ts); http/ gives them statuses and bodies. The CLI and the worker call the same services.",
      from: { path: '^server/modules/', pathNot: '^server/modules/[^/]+/routes\\.ts$' },
      to: { path: '^server/http/' },
    },
    {
      name: 'modules-take-no-http-auth',
      severity: 'error',
      comment:
        "A service takes the workspace's id, or the Workspace of workspace/context.ts (routes build it with workspaceOf(auth)), never the authenticated request's AuthContext (http/admission.ts): services serve the CLI, scripts and the worker too.",
      from: { path: '^server/modules/' },
      to: { path: '^server/http/admission\\.ts$' },
    },
    {
      name: 'migrations-are-frozen',
      severity: 'error',
      comment:
        'A migration is a snapshot of what ran on every deployment: runtime code lives in its module, and a migration keeps its own copy of what it ran. Only the migration loader (db/index.ts, by name at run time) reaches them.',
      from: { path: '^server/', pathNot: '^server/db/index\\.ts$' },
      to: { path: '^server/db/migrations/' },
    },
    {
      name: 'mail-libraries-only-in-mail',
      severity: 'error',
      comment:
        'server/modules/mail/ owns composing, sending and reading mail: the only user of nodemailer and imapflow.',
      from: { path: '^server/', pathNot: '^server/modules/mail/' },
      to: { path: '(^|/)node_modules/(@types/)?(nodemailer|imapflow)(/|$)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type import still ties one folder to another.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
