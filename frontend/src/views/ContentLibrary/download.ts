/**
 * Saves a file the API signed a link to under `fileName`. The browser navigates to /api/downloads, which redirects
 * to a link served as an attachment under that name (on S3 straight from the object storage): nothing is fetched
 * by script, so no CORS rule of the storage is involved and the file is never held in memory.
 */
export function downloadHref(url: string, fileName: string): string {
  return `/api/downloads?${new URLSearchParams({ url, name: fileName }).toString()}`;
}

export async function downloadFile(url: string, fileName: string): Promise<void> {
  const link = document.createElement('a');
  link.href = downloadHref(url, fileName);
  link.download = fileName;
  link.rel = 'noopener';
  document.body.appendChild(link);
  link.click();
  link.remove();
}
