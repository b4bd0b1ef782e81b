/** The job module's face: what other modules may use of it. */
import { JobService, type JobServiceDeps } from './service';

export const createJobModule = (deps: JobServiceDeps) => new JobService(deps);
