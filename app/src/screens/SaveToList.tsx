/** Saves the chosen search results to a list of their kind: one the workspace has, or a new one named here. */
import { useState, type FormEvent } from 'react';
import {
  useAddCompanies,
  useAddLeads,
  useCreateCompanyList,
  useCreatePeopleList,
  useLists,
  type ListKind,
} from '../hooks/api/lists';
import { plural } from '../components/Cost';
import { ErrorNotice, Loaded } from '../components/states';
import { href } from '../route';

const NEW = '';

export function SaveToList({ kind, ids }: { kind: ListKind; ids: string[] }) {
  const lists = useLists({ kind, limit: 100 });
  const [listId, setListId] = useState(NEW);
  const [name, setName] = useState('');
  const createPeople = useCreatePeopleList();
  const createCompanies = useCreateCompanyList();
  const addPeople = useAddLeads();
  const addCompanies = useAddCompanies();
  const [saved, setSaved] = useState<{ id: string; name: string; added: number; already: number } | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const busy = createPeople.isPending || createCompanies.isPending || addPeople.isPending || addCompanies.isPending;
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setFailure(null);
    setSaved(null);
    try {
      let id = listId;
      if (id === NEW) {
        const create = kind === 'people' ? createPeople : createCompanies;
        id = (await create.mutateAsync({ body: { name } })).data.list.id;
        setListId(id);
        setName('');
      }
      const { data } =
        kind === 'people'
          ? await addPeople.mutateAsync({ body: { listId: id, personIds: ids } })
          : await addCompanies.mutateAsync({ body: { listId: id, companyIds: ids } });
      setSaved({ id, name: data.list.name, added: data.added, already: data.alreadyInList });
    } catch (error) {
      setFailure(error);
    }
  };
  const noun: [string, string] = kind === 'people' ? ['person', 'people'] : ['company', 'companies'];
  return (
    <form onSubmit={(e) => void save(e)} aria-labelledby={`save-${kind}-title`} className="save-to-list">
      <h3 id={`save-${kind}-title`}>Save to a list</h3>
      <Loaded query={lists} what="lists">
        {({ data }) => (
          <div className="row">
            <label htmlFor={`save-${kind}-list`}>List</label>
            <select id={`save-${kind}-list`} value={listId} onChange={(e) => setListId(e.target.value)}>
              <option value={NEW}>A new list</option>
              {data.items.map((l) => (
                <option key={l.id} value={l.id}>
                  {l.name} ({plural(l.memberCount, 'member')})
                </option>
              ))}
            </select>
            {listId === NEW ? (
              <>
                <label htmlFor={`save-${kind}-name`}>New list&apos;s name</label>
                <input
                  id={`save-${kind}-name`}
                  required
                  maxLength={200}
                  value={name}
                  onChange={(e) => setName(e.target.value)}
                />
              </>
            ) : null}
            <button type="submit" disabled={busy || ids.length === 0}>
              Save {plural(ids.length, ...noun)}
            </button>
          </div>
        )}
      </Loaded>
      {ids.length === 0 ? <p className="hint">Choose rows above to save them.</p> : null}
      {saved ? (
        <p role="status">
          Added {plural(saved.added, ...noun)} to <a href={href('lists', saved.id)}>{saved.name}</a>
          {saved.already ? ` (${saved.already} already there)` : ''}.
        </p>
      ) : null}
      <ErrorNotice error={failure} />
    </form>
  );
}
