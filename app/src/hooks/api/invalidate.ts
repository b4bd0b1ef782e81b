/** Query keys of openapi-react-query start with the method and the path, so a path's reads are invalidated by prefix. */
import type { QueryClient } from '@tanstack/react-query';
import type { paths } from '../../../../client';

export const invalidate = (queryClient: QueryClient, ...reads: (keyof paths)[]) =>
  Promise.all(reads.map((path) => queryClient.invalidateQueries({ queryKey: ['get', path] })));
