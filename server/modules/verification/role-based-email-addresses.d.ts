/** role-based-email-addresses ships no types: module.exports is the list of role local parts (admin, info, ...). */
declare module 'role-based-email-addresses' {
  const localParts: string[];
  export = localParts;
}
