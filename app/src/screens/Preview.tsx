/** The next message one contact would get, as the sending engine renders it (spintax picked, variables filled). */
import { useState } from 'react';
import { useCampaignPreview } from '../hooks/api/campaigns';
import { useContact } from '../hooks/api/contacts';
import { ErrorNotice, Loading } from '../components/states';

export function Preview({ campaignId }: { campaignId: string }) {
  const [email, setEmail] = useState('');
  const contact = useContact(campaignId, email);
  const contactId = contact.data?.data.contact.id;
  const preview = useCampaignPreview(campaignId, contactId);
  const shown = preview.data?.data;
  return (
    <section aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      <label htmlFor="preview-email">Contact&apos;s email</label>
      <input
        id="preview-email"
        type="email"
        maxLength={320}
        value={email}
        onChange={(e) => setEmail(e.target.value.trim())}
      />
      <ErrorNotice error={contact.error ?? preview.error} />
      {contactId && preview.isPending ? <Loading what="the preview" /> : null}
      {shown ? (
        shown.message ? (
          <article className="preview" aria-label="Next message">
            <p>
              <strong>{shown.step?.label}</strong>
              {shown.sendAt ? ` at ${new Date(shown.sendAt).toLocaleString()}` : ''}
            </p>
            <p data-preview="subject">{shown.message.subject}</p>
            <pre data-preview="text">{shown.message.text}</pre>
          </article>
        ) : (
          <p className="state empty">
            Nothing to send next: {shown.reason}
            {shown.missingVariable ? ` (${shown.missingVariable})` : ''}
          </p>
        )
      ) : null}
    </section>
  );
}
