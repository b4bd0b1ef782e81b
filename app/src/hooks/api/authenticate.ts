import { useApi } from '../../api';

/** The signed-in key's workspace and scopes. */
export const useAuthenticate = () => useApi().useQuery('get', '/v2/authenticate', {}, { staleTime: Infinity });
