/** The placement module's face: what other modules may use of it. */
import { PlacementService, type PlacementServiceDeps } from './service';

export const createPlacementModule = (deps: PlacementServiceDeps) => new PlacementService(deps);
