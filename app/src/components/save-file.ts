/** Hands text the API answered (an export) to the browser as a file to save, without a second request. */
export function saveFile(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // The download has started from the object URL by the next task; then its memory can go.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
