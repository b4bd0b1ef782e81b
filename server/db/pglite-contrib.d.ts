/** The PGlite extension the server loads: node10 module resolution does not read the package's `exports`. */
declare module '@electric-sql/pglite/contrib/pg_trgm' {
  import type { Extension } from '@electric-sql/pglite';
  export const pg_trgm: Extension;
}
