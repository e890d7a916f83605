/** The bench's calls to the API as a signed-in user. */

export async function callApi<T>(
  baseUrl: string,
  token: string,
  route: string,
  init: { method?: string; json?: unknown; body?: FormData } = {},
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${baseUrl}${route}`, {
    method: init.method ?? (init.json || init.body ? 'POST' : 'GET'),
    headers: { authorization: `Bearer ${token}`, ...(init.json ? { 'content-type': 'application/json' } : {}) },
    body: init.json ? JSON.stringify(init.json) : init.body,
  });
  return { status: res.status, body: (await res.json()) as T };
}

export interface UploadedRender {
  projectId: string;
  renderId: string;
  renderUrl: string;
}

/** A new project with `jpeg` uploaded as its render (bench-render.jpg), through the API. */
export async function projectWithRender(baseUrl: string, token: string, projectName: string, jpeg: Buffer): Promise<UploadedRender> {
  const project = await callApi<{ project: { id: string } }>(baseUrl, token, '/api/projects', { json: { name: projectName } });
  if (project.status !== 201) throw new Error(`POST /api/projects answered ${project.status} ${JSON.stringify(project.body)}`);
  const form = new FormData();
  form.append('projectId', project.body.project.id);
  form.append('file', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'bench-render.jpg');
  const upload = await callApi<{ render: { data: { id: string; file_url: string } } }>(baseUrl, token, '/api/upload/renders', { body: form });
  if (upload.status !== 200) throw new Error(`upload answered ${upload.status} ${JSON.stringify(upload.body)}`);
  return { projectId: project.body.project.id, renderId: upload.body.render.data.id, renderUrl: upload.body.render.data.file_url };
}
