/** The sections of a screen as links under its heading (`#/settings/webhooks`), the current one marked. */
import { href } from '../route';

export interface Section {
  /** The hash segment after the screen's; '' for the screen's first section. */
  path: string;
  label: string;
}

export function SubNav({
  label,
  screen,
  sections,
  current,
}: {
  label: string;
  screen: string;
  sections: Section[];
  current: string;
}) {
  if (sections.length < 2) return null;
  return (
    <nav aria-label={label}>
      <ul className="tabs">
        {sections.map((s) => (
          <li key={s.path}>
            <a
              href={s.path ? href(screen, s.path) : href(screen)}
              aria-current={s.path === current ? 'page' : undefined}
            >
              {s.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
