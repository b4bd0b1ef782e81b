/** The audit module's face: what other modules may use of it. */
import { AuditService, type AuditServiceDeps } from './service';

export const createAuditModule = (deps: AuditServiceDeps) => new AuditService(deps);
