/**
 * What the route helper tells the audit log about a state-changing request (server/modules/audit writes it; a platform port, so neither side imports the other):
 * who (the key), what (the operation, the ids it names, the names of the fields it sent, never their
 * values, so no secret or message body), from which address, and the outcome (the answer's status).
 */
export interface AuditRecord {
  workspaceId: string;
  keyId: string;
  keyName: string | null;
  operation: string;
  targetIds: string[];
  fields: string[];
  address: string | null;
  status: number;
  requestId: string;
}

export interface Auditor {
  record(entry: AuditRecord): Promise<void>;
}
