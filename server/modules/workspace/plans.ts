/** The plan every workspace starts on (the seed's default limits and a starting credit grant), made by the first migration. */
export const DEFAULT_PLAN_ID = '00000000-0000-7000-8000-000000000001';
