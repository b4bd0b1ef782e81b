/**
 * The normalisation of the enrichment keys (documented in spec EnrichmentInput.yaml): the same
 * function reads an input and a stored row, so both sides compare in one form.
 */
/** Lower case, trimmed, inner runs of spaces collapsed. */
export const normalizeName = (name: string): string => name.trim().replace(/\s+/g, ' ').toLowerCase();

/** `https://uk.linkedin.com/in/Jane-Doe-4821/?trk=x` -> `jane-doe-4821`; null when not a LinkedIn profile address. */
export function linkedinSlug(url: string): string | null {
  const match = /^(?:https?:\/\/)?(?:[a-z]{2,3}\.|www\.)?linkedin\.com\/in\/([^/?#\s]+)\/?(?:[?#].*)?$/i.exec(
    url.trim(),
  );
  return match ? match[1].toLowerCase() : null;
}

/** The spellings of a profile address that a stored row may use, lower-cased, for an indexed IN look-up. */
export function linkedinUrlForms(slug: string): string[] {
  return ['https://', 'http://', ''].flatMap((scheme) =>
    ['www.', ''].flatMap((www) => ['', '/'].map((slash) => `${scheme}${www}linkedin.com/in/${slug}${slash}`)),
  );
}

const LEGAL_SUFFIX =
  /\s+(inc|incorporated|llc|llp|ltd|limited|gmbh|corp|corporation|co|company|sa|sas|ag|plc|bv|nv|oy|ab|pty|srl|spa)$/;

/** `Brightpath Logistics, Inc.` -> `brightpath logistics`. */
export function normalizeCompanyName(name: string): string {
  const words = name
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
  return words.replace(LEGAL_SUFFIX, '').trim() || words;
}
