/**
 * A question asked before an act that cannot be undone (a delete), in a modal dialog: the browser's own
 * `<dialog>` keeps the focus inside it and closes it with Escape.
 */
import { useEffect, useId, useRef, type ReactNode } from 'react';

export function ConfirmDialog({
  open,
  children,
  confirmLabel,
  onConfirm,
  onClose,
}: {
  open: boolean;
  /** The question, naming what the act does. */
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const questionId = useId();
  useEffect(() => {
    const element = dialog.current;
    if (open && !element?.open) element?.showModal();
    if (!open && element?.open) element.close();
  }, [open]);
  return (
    <dialog ref={dialog} aria-labelledby={questionId} onClose={onClose}>
      <p id={questionId}>{children}</p>
      <div className="actions">
        <button
          type="button"
          className="danger"
          onClick={() => {
            onClose();
            onConfirm();
          }}
        >
          {confirmLabel}
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
