/** The audit module's face: what other modules may use of it. */
import { AuditService } from './service';

type AuditServiceArgs = ConstructorParameters<typeof AuditService>;
/** What AuditService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface AuditModuleDeps {
  db: AuditServiceArgs[0];
  store: AuditServiceArgs[1];
  clock: AuditServiceArgs[2];
  retentionMonths: AuditServiceArgs[3];
}
export const createAuditModule = (d: AuditModuleDeps) => new AuditService(d.db, d.store, d.clock, d.retentionMonths);
