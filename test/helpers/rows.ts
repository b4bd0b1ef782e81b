/** The row a test's query must find: a missing one fails the test naming what was looked for. */
export async function found<T>(query: PromiseLike<T | undefined>, what = 'row'): Promise<T> {
  const row = await query;
  if (row === undefined) throw new Error(`expected a ${what}, found none`);
  return row;
}
