/**
 * Client review by link (issue 43, items 1-4): links made by members (validation, hash-only storage, expiry, revoke,
 * e-mail over a real SMTP server), the guest's session (password, lockout, rate limits, scoped to its link), pay on
 * approval (no original before approval through any file route; a guest approval is one approval under the policy
 * and the workspace is charged once on the final one), the refusal path (the studio is asked, nothing charged or
 * lost), notifications and webhooks. Real API, PostgreSQL, Temporal workers.
 */
import { createHash } from 'node:crypto';
import { createApp } from '../../api/app';
import { loggedPath } from '../../api/middleware/requestContext';
import { logger } from '../../config/logger';
import { DEFAULT_GUEST_LIMITS } from '../../services/review/guestSessions';
import { REVIEW_LINK_MSG, guestLabel } from '../../domain/reviewLinks';
import { checkLedgerInvariant } from '../../services/billing/credits';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request, serve, type JsonResponse } from '../support/http';
import { startSmtpServer, type SmtpServer } from '../support/smtpServer';
import { buyCredits, renderBytes, startHarness, type Harness } from '../imageEdit/harness';
import { createTeam, inTeam, seedTeamImage, teamProject, type Team } from '../workspaces/creditsFixtures';

let h: Harness;
let smtp: SmtpServer;
let owner: TestUser;
let member: TestUser;
let viewer: TestUser;
let outsider: TestUser;
let team: Team;
let other: Team;
let projectId: string;
let otherProjectId: string;
let addressCounter = 0;

const GUEST = { name: 'Ann Client', email: 'ann@client.example' };

/** A fresh client address (the API trusts one proxy hop here), so limits of one test do not touch another's. */
const nextAddress = () => `203.0.113.${++addressCounter}`;

beforeAll(async () => {
  smtp = await startSmtpServer();
  h = await startHarness('review-links', { config: { smtpUrl: smtp.url, smtpFrom: 'Render Studio <review@render-studio.test>', trustProxyHops: 1 } });
  [owner, member, viewer, outsider] = await Promise.all(['Olivia Owner', 'Mia Member', 'Vic Viewer', 'Otto Outsider'].map((name) => createTestUser(h.baseUrl, { name })));
  other = await createTeam(h.knex, outsider, [], 10);
  otherProjectId = await teamProject(h.knex, other.id, 'Elsewhere');
  await withEndpoint(other.id);
}, 120_000);

// a team of its own for each test: the pending cap (5 per workspace) never refuses a test's items
beforeEach(async () => {
  team = await createTeam(h.knex, owner, [
    [member, 'member'],
    [viewer, 'viewer'],
  ], 40);
  projectId = await teamProject(h.knex, team.id);
  await withEndpoint(team.id);
});

/** A webhook endpoint of the workspace subscribed to the review events, so their outbox rows are written. */
async function withEndpoint(workspaceId: string): Promise<void> {
  await h.knex('webhook_endpoints').insert({
    workspace_id: workspaceId,
    url: 'http://127.0.0.1:9/never',
    event_types: ['review.comment_created', 'review.decided', 'comment.created'],
    secret: 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdA==',
    status: 'enabled',
  });
}

afterAll(async () => {
  await h?.close();
  await smtp?.close();
  await closeTestKnex();
});

function makeLink(user: TestUser, body: Record<string, unknown>, workspaceId = team.id): Promise<JsonResponse> {
  return request(h.baseUrl, '/api/review-links', { token: user.token, headers: inTeam(workspaceId), json: body });
}

interface Guest {
  linkId: string;
  cookie: string;
  address: string;
}

async function openSession(token: string, options: { password?: string; address?: string } = {}): Promise<JsonResponse & { cookie: string | null }> {
  const res = await request(h.baseUrl, '/api/guest/sessions', {
    json: { token, ...(options.password !== undefined ? { password: options.password } : {}) },
    headers: { 'x-forwarded-for': options.address ?? nextAddress() },
  });
  const setCookie = res.headers.get('set-cookie');
  return { ...res, cookie: setCookie ? setCookie.split(';')[0] : null };
}

async function guestOf(token: string, password?: string): Promise<Guest> {
  const address = nextAddress();
  const opened = await openSession(token, { password, address });
  expect(opened.status).toBe(201);
  return { linkId: opened.body.linkId, cookie: opened.cookie as string, address };
}

function asGuest(g: Guest, path: string, json?: unknown, linkId = g.linkId): Promise<JsonResponse> {
  return request(h.baseUrl, `/api/guest/links/${linkId}${path}`, { headers: { cookie: g.cookie, 'x-forwarded-for': g.address }, ...(json !== undefined ? { json } : {}) });
}

async function consumeRows(workspaceId: string, approvalId: string): Promise<number> {
  const rows = await h.knex('credit_transactions').where({ workspace_id: workspaceId, transaction_type: 'consume' }).whereRaw("metadata->>'approvalId' = ?", [approvalId]);
  return rows.length;
}

async function webhookEvents(workspaceId: string, type: string): Promise<Array<Record<string, any>>> {
  const rows = (await h.knex('webhook_events').where({ workspace_id: workspaceId, type }).orderBy('created_at').select('payload')) as Array<{ payload: { data: Record<string, any> } }>;
  return rows.map((r) => r.payload.data);
}

function setPolicy(approvalPolicy: unknown): Promise<JsonResponse> {
  return request(h.baseUrl, `/api/workspaces/${team.id}/approval-policy`, { method: 'PUT', token: owner.token, json: { approvalPolicy } });
}

describe('making a link', () => {
  it('refuses bad input with a clear 400 and writes nothing', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    const foreign = await seedTeamImage(h, other.id, otherProjectId, outsider);
    const before = await h.knex('review_links').count({ n: '*' }).first();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ itemIds: [item.approvalId] }, REVIEW_LINK_MSG.titleRequired],
      [{ title: '   ', itemIds: [item.approvalId] }, REVIEW_LINK_MSG.titleRequired],
      [{ title: 'x'.repeat(121), itemIds: [item.approvalId] }, REVIEW_LINK_MSG.titleTooLong],
      [{ title: 'T', itemIds: [item.approvalId], expiresInDays: 0 }, REVIEW_LINK_MSG.expiryInvalid],
      [{ title: 'T', itemIds: [item.approvalId], expiresInDays: 91 }, REVIEW_LINK_MSG.expiryInvalid],
      [{ title: 'T', itemIds: [item.approvalId], expiresInDays: 2.5 }, REVIEW_LINK_MSG.expiryInvalid],
      [{ title: 'T', itemIds: [item.approvalId], password: 'abc' }, REVIEW_LINK_MSG.passwordTooShort],
      [{ title: 'T' }, REVIEW_LINK_MSG.itemsRequired],
      [{ title: 'T', itemIds: [] }, REVIEW_LINK_MSG.itemsRequired],
      [{ title: 'T', itemIds: [foreign.approvalId] }, REVIEW_LINK_MSG.itemsInvalid],
      [{ title: 'T', itemIds: [item.approvalId, 'not-an-id'] }, REVIEW_LINK_MSG.itemsInvalid],
      [{ title: 'T', itemIds: [item.approvalId], sneaky: true }, ''],
    ];
    for (const [body, error] of cases) {
      const res = await makeLink(member, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      if (error) expect(res.body.error).toBe(error);
      expect(typeof res.body.code).toBe('string');
    }
    // a project of another workspace is not found from here
    expect((await makeLink(member, { title: 'T', projectId: otherProjectId })).status).toBe(404);
    expect(await h.knex('review_links').count({ n: '*' }).first()).toEqual(before);
  });

  it('a member makes it; only the token\'s sha256 is stored, the password as an scrypt hash; 14 days by default; viewers may only look, outsiders find nothing', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    expect((await makeLink(viewer, { title: 'T', itemIds: [item.approvalId] })).status).toBe(403);
    expect((await makeLink(outsider, { title: 'T', itemIds: [item.approvalId] })).status).toBe(404);
    const res = await makeLink(member, { title: 'Terrace', message: 'Please look at the terrace', itemIds: [item.approvalId], password: 'sunny-terrace' });
    expect(res.status).toBe(201);
    const { token, url, link } = res.body;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(url).toBe(`${h.config.publicUrl.replace(/\/+$/, '')}/r/${token}`);
    expect(link).toMatchObject({ title: 'Terrace', state: 'active', hasPassword: true, canDecide: false, canDownload: false, items: [{ id: item.approvalId, status: 'pending' }] });
    const days = (new Date(link.expiresAt).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(13.99);
    expect(days).toBeLessThanOrEqual(14);
    const row = await h.knex('review_links').where({ id: link.id }).first();
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(row)).not.toContain(token);
    expect(JSON.stringify(row)).not.toContain('sunny-terrace');
    // listed on the Review links page, for members; a viewer may not manage links
    const listed = await request(h.baseUrl, '/api/review-links', { token: owner.token, headers: inTeam(team.id) });
    expect(listed.body.links.map((l: { id: string }) => l.id)).toContain(link.id);
    expect(JSON.stringify(listed.body)).not.toContain(token);
    // every member sees what was shared; only members and up make, extend or revoke links
    expect((await request(h.baseUrl, '/api/review-links', { token: viewer.token, headers: inTeam(team.id) })).status).toBe(200);
    expect((await request(h.baseUrl, `/api/review-links/${link.id}/revoke`, { method: 'POST', token: viewer.token, headers: inTeam(team.id) })).status).toBe(403);
  });

  it("shares a whole project's queue", async () => {
    const project = await teamProject(h.knex, team.id, 'Queue');
    const a = await seedTeamImage(h, team.id, project, member);
    const b = await seedTeamImage(h, team.id, project, member);
    const res = await makeLink(member, { title: 'Queue', projectId: project });
    expect(res.status).toBe(201);
    expect(res.body.link.items.map((i: { id: string }) => i.id).sort()).toEqual([a.approvalId, b.approvalId].sort());
    const empty = await teamProject(h.knex, team.id, 'Empty');
    const none = await makeLink(member, { title: 'Queue', projectId: empty });
    expect(none.status).toBe(400);
    expect(none.body.error).toBe(REVIEW_LINK_MSG.projectQueueEmpty);
  });

  it('offers what a link may hold: the queue and approved items of the workspace, and makes a link of an approved item', async () => {
    const waiting = await seedTeamImage(h, team.id, projectId, member);
    const approved = await seedTeamImage(h, team.id, projectId, member);
    const rejected = await seedTeamImage(h, team.id, projectId, member);
    await request(h.baseUrl, '/api/approvals/approve', { token: owner.token, headers: inTeam(team.id), json: { approvalId: approved.approvalId } });
    await buyCredits(h.knex, team.id, 1);
    await request(h.baseUrl, '/api/approvals/reject', { token: owner.token, headers: inTeam(team.id), json: { approvalId: rejected.approvalId } });
    const res = await request(h.baseUrl, '/api/shareable-items', { token: viewer.token, headers: inTeam(team.id) });
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: { id: string; status: string }) => [i.id, i.status]).sort()).toEqual(
      [
        [waiting.approvalId, 'pending'],
        [approved.approvalId, 'approved'],
      ].sort(),
    );
    expect((await request(h.baseUrl, '/api/shareable-items', { token: outsider.token, headers: inTeam(team.id) })).status).toBe(404);
    // an approved item, by its approval id or its saved item's id
    const saved = (await h.knex('pending_approvals').where({ id: approved.approvalId }).first('content_id')).content_id as string;
    for (const id of [approved.approvalId, saved]) {
      const made = await makeLink(member, { title: 'Approved', itemIds: [id] });
      expect(made.status).toBe(201);
      expect(made.body.link.items).toEqual([expect.objectContaining({ id: approved.approvalId, status: 'approved' })]);
    }
    const refused = await makeLink(member, { title: 'Rejected', itemIds: [rejected.approvalId] });
    expect(refused.status).toBe(400);
  });

  it('e-mails the link to addresses through the SMTP server; a wrong token is refused', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    const made = await makeLink(member, { title: 'Harbour views', message: 'Two options for the hero shot', itemIds: [item.approvalId] });
    const wrong = await request(h.baseUrl, `/api/review-links/${made.body.link.id}/email`, { token: member.token, headers: inTeam(team.id), json: { token: 'x'.repeat(43), to: ['buyer@client.example'] } });
    expect(wrong.status).toBe(404);
    const bad = await request(h.baseUrl, `/api/review-links/${made.body.link.id}/email`, { token: member.token, headers: inTeam(team.id), json: { token: made.body.token, to: ['not an address'] } });
    expect(bad.status).toBe(400);
    const sent = await request(h.baseUrl, `/api/review-links/${made.body.link.id}/email`, {
      token: member.token,
      headers: inTeam(team.id),
      json: { token: made.body.token, to: ['buyer@client.example', 'agent@client.example'] },
    });
    expect(sent.status).toBe(200);
    expect(sent.body.sent).toBe(true);
    const mail = await smtp.next((m) => m.to.includes('buyer@client.example'));
    expect(mail.to).toContain('agent@client.example');
    expect(mail.subject).toBe(`${(await h.knex('workspaces').where({ id: team.id }).first('name')).name} shared "Harbour views" for your review`);
    expect(mail.text).toContain(made.body.url);
    expect(mail.text).toContain('Two options for the hero shot');
  });
});

describe('the guest page and session', () => {
  it('answers the page with no-referrer and noindex; 404 for an unknown token; 410 once revoked; the path is logged without the token', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    const made = await makeLink(member, { title: 'Page', itemIds: [item.approvalId] });
    const page = await fetch(`${h.baseUrl}/r/${made.body.token}`, { headers: { 'x-forwarded-for': nextAddress() } });
    expect(page.status).toBe(200);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-robots-tag')).toContain('noindex');
    expect(await page.text()).toContain('noindex');
    expect((await fetch(`${h.baseUrl}/r/${'A'.repeat(43)}`, { headers: { 'x-forwarded-for': nextAddress() } })).status).toBe(404);
    expect(loggedPath(`/r/${made.body.token}`)).toBe('/r/:token');

    const guest = await guestOf(made.body.token);
    expect((await asGuest(guest, '')).status).toBe(200);
    const revoked = await request(h.baseUrl, `/api/review-links/${made.body.link.id}/revoke`, { token: member.token, headers: inTeam(team.id), method: 'POST' });
    expect(revoked.body.link.state).toBe('revoked');
    const after = await fetch(`${h.baseUrl}/r/${made.body.token}`, { headers: { 'x-forwarded-for': nextAddress() } });
    expect(after.status).toBe(410);
    const session = await asGuest(guest, '');
    expect(session.status).toBe(410);
    expect(session.body.error).toBe(REVIEW_LINK_MSG.revoked);
    expect((await openSession(made.body.token)).status).toBe(410);
    expect((await request(h.baseUrl, `/api/review-links/${made.body.link.id}/extend`, { token: member.token, headers: inTeam(team.id), json: { expiresInDays: 3 } })).status).toBe(409);
  });

  it('an expired link answers 410 until extended (at most 90 days)', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    const made = await makeLink(member, { title: 'Expiry', itemIds: [item.approvalId], expiresInDays: 1 });
    await h.knex('review_links').where({ id: made.body.link.id }).update({ expires_at: new Date(Date.now() - 1000) });
    const opened = await openSession(made.body.token);
    expect(opened.status).toBe(410);
    expect(opened.body.error).toBe(REVIEW_LINK_MSG.expired);
    const listed = await request(h.baseUrl, `/api/review-links/${made.body.link.id}`, { token: member.token, headers: inTeam(team.id) });
    expect(listed.body.link.state).toBe('expired');
    const tooLong = await request(h.baseUrl, `/api/review-links/${made.body.link.id}/extend`, { token: member.token, headers: inTeam(team.id), json: { expiresInDays: 91 } });
    expect(tooLong.status).toBe(400);
    const extended = await request(h.baseUrl, `/api/review-links/${made.body.link.id}/extend`, { token: member.token, headers: inTeam(team.id), json: { expiresInDays: 90 } });
    expect(extended.status).toBe(200);
    expect(extended.body.link.state).toBe('active');
    expect((await openSession(made.body.token)).status).toBe(201);
  });

  it('a password is asked; 10 wrong ones lock that link for that address for an hour, not for others', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    const made = await makeLink(member, { title: 'Locked', itemIds: [item.approvalId], password: 'open-sesame' });
    const address = nextAddress();
    const none = await openSession(made.body.token, { address });
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('REVIEW_LINK_PASSWORD_REQUIRED');
    for (let i = 1; i <= 9; i++) {
      const wrong = await openSession(made.body.token, { address, password: `wrong-${i}` });
      expect(wrong.status).toBe(401);
      expect(wrong.body.code).toBe('REVIEW_LINK_PASSWORD_WRONG');
    }
    const tenth = await openSession(made.body.token, { address, password: 'wrong-10' });
    expect(tenth.status).toBe(429);
    expect(tenth.body.code).toBe('REVIEW_LINK_LOCKED');
    expect(tenth.body.error).toMatch(/try again in (59|60) minutes|1 hour/);
    // even the right password, from that address
    const right = await openSession(made.body.token, { address, password: 'open-sesame' });
    expect(right.status).toBe(429);
    expect(right.cookie).toBeNull();
    // another address is not locked out
    const elsewhere = await openSession(made.body.token, { password: 'open-sesame' });
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.cookie).toMatch(/^rs_review_[0-9a-f]{32}=/);
    const cookieHeader = elsewhere.headers.get('set-cookie') as string;
    expect(cookieHeader).toMatch(/httponly/i);
    expect(cookieHeader).toMatch(/samesite=lax/i);
    expect(cookieHeader).toContain(`path=/api/guest/links/${made.body.link.id}`);
  });

  it('look-ups are limited per address, guest requests per link', async () => {
    const address = nextAddress();
    let last = 0;
    for (let i = 0; i < 31; i++) last = (await fetch(`${h.baseUrl}/r/${'B'.repeat(43)}`, { headers: { 'x-forwarded-for': address } })).status;
    expect(last).toBe(429);
    expect((await openSession('B'.repeat(43), { address })).status).toBe(429);
    expect((await openSession('B'.repeat(43))).status).toBe(404);

    // per link: an app with a small allowance (the default is 600 a minute), every guest of the link together
    const small = await serve(createApp({ config: h.config, knex: h.knex, logger, taskQueues: h.queues, guestReviewLimits: { ...DEFAULT_GUEST_LIMITS, actionsPerMinute: 5 } }));
    try {
      const item = await seedTeamImage(h, team.id, projectId, member);
      const made = await makeLink(member, { title: 'Busy', itemIds: [item.approvalId] });
      const guests = [await guestOf(made.body.token), await guestOf(made.body.token)];
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const g = guests[i % 2];
        statuses.push((await request(small.baseUrl, `/api/guest/links/${g.linkId}`, { headers: { cookie: g.cookie, 'x-forwarded-for': g.address } })).status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      // another link is not held back
      const other = await makeLink(member, { title: 'Quiet', itemIds: [item.approvalId] });
      const g = await guestOf(other.body.token);
      expect((await request(small.baseUrl, `/api/guest/links/${g.linkId}`, { headers: { cookie: g.cookie, 'x-forwarded-for': g.address } })).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});

describe('what a guest reaches', () => {
  it('nothing of another workspace, nothing not on the link, no action the link does not allow; a session is for its link only', async () => {
    const onLink = await seedTeamImage(h, team.id, projectId, member);
    const offLink = await seedTeamImage(h, team.id, projectId, member);
    const foreign = await seedTeamImage(h, other.id, otherProjectId, outsider);
    const made = await makeLink(member, { title: 'Scoped', itemIds: [onLink.approvalId] });
    const otherLink = await makeLink(outsider, { title: 'Other', itemIds: [foreign.approvalId], canDecide: true }, other.id);
    const memberThread = await request(h.baseUrl, `/api/content/${offLink.approvalId}/comments`, { token: member.token, headers: inTeam(team.id), json: { body: 'internal note' } });
    expect(memberThread.status).toBe(201);
    const guest = await guestOf(made.body.token);

    const view = await asGuest(guest, '');
    expect(view.body.items.map((i: { id: string }) => i.id)).toEqual([onLink.approvalId]);
    for (const id of [offLink.approvalId, foreign.approvalId, 'nope']) {
      expect((await asGuest(guest, `/items/${id}/comments`)).status).toBe(404);
      const comment = await asGuest(guest, `/items/${id}/comments`, { guest: GUEST, body: 'hi' });
      expect(comment.status).toBe(404);
      expect(comment.body.code).toBe('REVIEW_ITEM_NOT_ON_LINK');
    }
    expect((await asGuest(guest, `/threads/${memberThread.body.thread.id}/replies`, { guest: GUEST, body: 'peek' })).status).toBe(404);
    // comment only: no decision
    for (const [action, body] of [
      ['approve', { guest: GUEST }],
      ['request-changes', { guest: GUEST, request: 'brighter' }],
    ] as const) {
      const refused = await asGuest(guest, `/items/${onLink.approvalId}/${action}`, body);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('REVIEW_ACTION_NOT_ALLOWED');
    }
    expect((await h.knex('pending_approvals').where({ id: onLink.approvalId }).first('status')).status).toBe('pending');
    // the session of one link opens no other: neither by its cookie, nor under the other link's cookie name
    expect((await asGuest(guest, '', undefined, otherLink.body.link.id)).status).toBe(401);
    const [, value] = guest.cookie.split('=');
    const forged = await request(h.baseUrl, `/api/guest/links/${otherLink.body.link.id}`, { headers: { cookie: `rs_review_${otherLink.body.link.id.replace(/-/g, '')}=${value}`, 'x-forwarded-for': guest.address } });
    expect(forged.status).toBe(401);
    expect((await asGuest(guest, `/items/${foreign.approvalId}/approve`, { guest: GUEST }, otherLink.body.link.id)).status).toBe(401);
    // no session at all
    expect((await request(h.baseUrl, `/api/guest/links/${made.body.link.id}`)).status).toBe(401);
    // guests give a name and an e-mail
    const anonymous = await asGuest(guest, `/items/${onLink.approvalId}/comments`, { guest: { name: 'Ann', email: 'no' }, body: 'hi' });
    expect(anonymous.status).toBe(400);
  });

  it('no original before approval through any route or file link; after approval only with downloads allowed', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    const row = await h.knex('pending_approvals').where({ id: item.approvalId }).first('original_bucket', 'original_path', 'watermarked_path', 'thumbnail_path');
    const made = await makeLink(member, { title: 'Files', itemIds: [item.approvalId], canDecide: true, canDownload: true });
    const commentOnly = await makeLink(member, { title: 'Files, no downloads', itemIds: [item.approvalId] });
    const guest = await guestOf(made.body.token);
    const plain = await guestOf(commentOnly.body.token);

    const answers = [await asGuest(guest, ''), await asGuest(guest, `/items/${item.approvalId}/comments`), await asGuest(plain, '')];
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(JSON.stringify(a.body)).not.toContain(row.original_path);
      expect(JSON.stringify(a.body)).not.toContain(row.thumbnail_path);
    }
    const pending = answers[0].body.items[0];
    expect(pending).toMatchObject({ status: 'pending', downloadUrl: null, canDecide: true });
    expect(pending.previewUrl).toContain(row.watermarked_path);
    // a path on this server, or with S3 storage a link the store serves itself (presigned)
    expect((await fetch(new URL(pending.previewUrl, h.baseUrl))).status).toBe(200);
    if (h.config.storageBackend === 'local') {
      // a signed link to the original (as a leaked or guessed one would be) is refused by every file route. With S3
      // storage the files are not served through these routes but by presigned links from the store, and a pending
      // original is signed for no one: no answer above names its path.
      const originalLink = h.storage.urls.sign(row.original_bucket, row.original_path);
      expect((await fetch(`${h.baseUrl}${originalLink}`)).status).toBe(403);
      const viaDownloads = `/api/downloads?url=${encodeURIComponent(originalLink)}&name=x.jpg`;
      // signed out (the guest) it needs a session; signed in it refuses the original
      expect((await fetch(`${h.baseUrl}${viaDownloads}`, { redirect: 'manual' })).status).toBe(401);
      expect((await request(h.baseUrl, viaDownloads, { token: member.token, headers: inTeam(team.id) })).status).toBe(403);
      expect((await fetch(`${h.baseUrl}${h.storage.urls.sign(row.original_bucket, row.thumbnail_path)}`)).status).toBe(403);
    }

    const approved = await asGuest(guest, `/items/${item.approvalId}/approve`, { guest: GUEST });
    expect(approved.status).toBe(200);
    expect(approved.body.outcome).toBe('approved');
    const withDownloads = (await asGuest(guest, '')).body.items[0];
    expect(withDownloads.status).toBe('approved');
    expect(withDownloads.downloadUrl).toEqual(expect.any(String));
    const download = await fetch(new URL(withDownloads.downloadUrl, h.baseUrl));
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toContain('attachment');
    const noDownloads = (await asGuest(plain, '')).body.items[0];
    expect(noDownloads.downloadUrl).toBeNull();
    expect(noDownloads.previewUrl).toContain(row.thumbnail_path);
    expect(JSON.stringify(noDownloads)).not.toContain(row.original_path);
  });
});

describe('guest decisions', () => {
  afterEach(async () => {
    expect((await setPolicy({ kind: 'any' })).status).toBe(200);
    expect((await checkLedgerInvariant(h.knex, team.id)).ok).toBe(true);
  });

  it('under two approvals, a guest approval counts once per link; the member\'s second approval charges once; recorded as "Guest: name (e-mail) via link <title>"', async () => {
    expect((await setPolicy({ kind: 'count', count: 2 })).status).toBe(200);
    const item = await seedTeamImage(h, team.id, projectId, member);
    const made = await makeLink(member, { title: 'Two approvals', itemIds: [item.approvalId], canDecide: true });
    const guest = await guestOf(made.body.token);
    const second = await guestOf(made.body.token);
    const before = await h.knex('profiles').where({ id: team.id }).first('credits', 'reserved_credits');

    const first = await asGuest(guest, `/items/${item.approvalId}/approve`, { guest: GUEST });
    expect(first.status).toBe(200);
    expect(first.body.outcome).toBe('approval_counted');
    expect(await consumeRows(team.id, item.approvalId)).toBe(0);
    expect(await h.knex('profiles').where({ id: team.id }).first('credits', 'reserved_credits')).toEqual(before);
    // another guest of the same link does not make a second approval
    const again = await asGuest(second, `/items/${item.approvalId}/approve`, { guest: { name: 'Bob Buyer', email: 'bob@client.example' } });
    expect(again.status).toBe(409);
    expect(await consumeRows(team.id, item.approvalId)).toBe(0);
    const label = guestLabel(GUEST, 'Two approvals');
    const queue = await request(h.baseUrl, '/api/approvals/list', { token: owner.token, headers: inTeam(team.id) });
    const listed = queue.body.data.find((i: { id: string }) => i.id === item.approvalId);
    expect(listed.approvals.approved_by.map((p: { name: string }) => p.name)).toEqual([label]);

    const final = await request(h.baseUrl, '/api/approvals/approve', { token: owner.token, headers: inTeam(team.id), json: { approvalId: item.approvalId } });
    expect(final.status).toBe(200);
    expect(final.body.contentId).toEqual(expect.any(String));
    expect(await consumeRows(team.id, item.approvalId)).toBe(1);
    expect(await h.client.workflow.getHandle(`approval-${item.approvalId}`).result()).toBe('approved');
    const decided = (await webhookEvents(team.id, 'review.decided')).filter((d) => d.approvalId === item.approvalId);
    expect(decided).toEqual([expect.objectContaining({ reviewLinkId: made.body.link.id, decision: 'approve', outcome: 'approval_counted', guest: GUEST })]);
    // the item's history names the guest as they said, and the link
    const history = await request(h.baseUrl, `/api/content/${item.approvalId}/history`, { token: viewer.token, headers: inTeam(team.id) });
    expect(history.body.history.map((e: { kind: string; by: { name: string } | null }) => [e.kind, e.by?.name ?? null])).toEqual([
      ['generated', 'Mia Member'],
      ['approved', label],
      ['approved', 'Olivia Owner'],
      ['saved', null],
    ]);
  });

  it('under any member, a guest approval is final: charged once, saved, the starter told who approved, review.decided sent', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    const made = await makeLink(owner, { title: 'Final say', itemIds: [item.approvalId], canDecide: true });
    const guest = await guestOf(made.body.token);
    const res = await asGuest(guest, `/items/${item.approvalId}/approve`, { guest: GUEST });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, outcome: 'approved', message: 'Approved. Thank you!' });
    expect(await consumeRows(team.id, item.approvalId)).toBe(1);
    const row = await h.knex('pending_approvals').where({ id: item.approvalId }).first('status', 'content_id');
    expect(row.status).toBe('approved');
    const again = await asGuest(guest, `/items/${item.approvalId}/approve`, { guest: GUEST });
    expect(again.status).toBe(409);
    expect(await consumeRows(team.id, item.approvalId)).toBe(1);
    const told = await h.knex('notifications').where({ user_id: member.id, kind: 'decision', item_id: row.content_id }).pluck('text');
    expect(told).toEqual([`${guestLabel(GUEST, 'Final say')} approved team - AI edit.jpg, which you started`]);
    const decided = (await webhookEvents(team.id, 'review.decided')).filter((d) => d.approvalId === item.approvalId);
    expect(decided).toEqual([expect.objectContaining({ reviewLinkId: made.body.link.id, outcome: 'approved' })]);
  });

  it('where the rules refuse (no past purchase), the studio is asked: nothing rejected, charged or released, members notified', async () => {
    const poor = await createTeam(h.knex, owner, [[member, 'member']], 10);
    const poorProject = await teamProject(h.knex, poor.id, 'No purchase yet');
    await withEndpoint(poor.id);
    const item = await seedTeamImage(h, poor.id, poorProject, member);
    const made = await makeLink(member, { title: 'Asking', itemIds: [item.approvalId], canDecide: true }, poor.id);
    const guest = await guestOf(made.body.token);
    const before = await h.knex('profiles').where({ id: poor.id }).first('credits', 'reserved_credits');
    const res = await asGuest(guest, `/items/${item.approvalId}/request-changes`, { guest: GUEST, request: 'Make the sky <b>bluer</b>', pin: { x: 0.5, y: 0.2 } });
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('studio_asked');
    expect(res.body.message).toBe(REVIEW_LINK_MSG.studioAsked);
    expect((await h.knex('pending_approvals').where({ id: item.approvalId }).first('status')).status).toBe('pending');
    expect((await h.knex('credit_reservations').where({ id: item.reservationId }).first('status')).status).toBe('active');
    expect(await h.knex('profiles').where({ id: poor.id }).first('credits', 'reserved_credits')).toEqual(before);
    // the request is kept in the item's thread as the guest's, as text
    const threads = await request(h.baseUrl, `/api/content/${item.approvalId}/comments`, { token: owner.token, headers: inTeam(poor.id) });
    expect(threads.body.threads[0].comments[0]).toMatchObject({ body: 'Make the sky <b>bluer</b>', author: { userId: null, name: 'Ann Client (guest)' } });
    expect(threads.body.threads[0].pin).toEqual({ x: 0.5, y: 0.2 });
    for (const user of [owner, member]) {
      const texts = await h.knex('notifications').where({ user_id: user.id, workspace_id: poor.id, kind: 'decision' }).pluck('text');
      expect(texts).toEqual([expect.stringContaining(`${guestLabel(GUEST, 'Asking')} asked for changes on team - AI edit.jpg. It was not rejected:`)]);
    }
    const decided = (await webhookEvents(poor.id, 'review.decided'))[0];
    expect(decided).toMatchObject({ reviewLinkId: made.body.link.id, decision: 'request_changes', outcome: 'studio_asked', request: 'Make the sky <b>bluer</b>' });
    expect((await checkLedgerInvariant(h.knex, poor.id)).ok).toBe(true);
  });

  it('a guest comment reaches the members (thread, bell, webhooks with the link id) and is kept as text', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    const made = await makeLink(owner, { title: 'Comments', itemIds: [item.approvalId] });
    const guest = await guestOf(made.body.token);
    const body = '<img src=x onerror=alert(1)> looks great';
    const res = await asGuest(guest, `/items/${item.approvalId}/comments`, { guest: GUEST, body, pin: { x: 0.1, y: 0.2, w: 0.3, h: 0.3 } });
    expect(res.status).toBe(201);
    expect(res.body.thread.comments[0]).toMatchObject({ body, author: { userId: null, name: 'Ann Client (guest)' } });
    const reply = await request(h.baseUrl, `/api/comments/threads/${res.body.thread.id}/replies`, { token: member.token, headers: inTeam(team.id), json: { body: 'Thanks Ann' } });
    expect(reply.status).toBe(201);
    const seen = await asGuest(guest, `/items/${item.approvalId}/comments`);
    expect(seen.body.threads[0].comments.map((c: { author: { name: string; userId: string | null } }) => c.author)).toEqual([
      { userId: null, name: 'Ann Client (guest)' },
      { userId: null, name: 'Mia Member' },
    ]);
    expect(JSON.stringify(seen.body)).not.toContain(member.email);
    const guestReply = await asGuest(guest, `/threads/${res.body.thread.id}/replies`, { guest: GUEST, body: 'Welcome' });
    expect(guestReply.status).toBe(201);
    for (const user of [owner, member]) {
      const texts = await h.knex('notifications').where({ user_id: user.id, workspace_id: team.id, thread_id: res.body.thread.id }).pluck('text');
      expect(texts).toContain(`${guestLabel(GUEST, 'Comments')} commented on team - AI edit.jpg`);
    }
    // and by e-mail, per their choice (each, the default)
    const mail = await smtp.next((m) => m.to.includes(owner.email) && m.subject.startsWith(`${guestLabel(GUEST, 'Comments')} commented on team - AI edit.jpg`));
    expect(mail.text).toContain('team - AI edit.jpg');
    const history = await request(h.baseUrl, `/api/content/${item.approvalId}/history`, { token: owner.token, headers: inTeam(team.id) });
    expect(history.body.history.filter((e: { kind: string }) => e.kind === 'comment').map((e: { by: { name: string } }) => e.by.name)).toEqual(['Ann Client (guest)']);
    const events = (await webhookEvents(team.id, 'review.comment_created')).filter((d) => d.threadId === res.body.thread.id);
    expect(events.map((e) => [e.reviewLinkId, e.opensThread, e.guest.email])).toEqual([
      [made.body.link.id, true, GUEST.email],
      [made.body.link.id, false, GUEST.email],
    ]);
    // the members' Review links page shows who came
    const link = await request(h.baseUrl, `/api/review-links/${made.body.link.id}`, { token: owner.token, headers: inTeam(team.id) });
    expect(link.body.link.visits[0]).toMatchObject({ guestName: 'Ann Client', guestEmail: GUEST.email });
  });

  it('a guest request for changes rejects the item under the rules and starts its next version, which the link then shows', async () => {
    await buyCredits(h.knex, team.id, 1);
    const form = new FormData();
    form.append('projectId', projectId);
    form.append('file', new Blob([new Uint8Array(await renderBytes(640, 360))], { type: 'image/png' }), 'terrace-render.png');
    const upload = await request<{ render: { data: { id: string } } }>(h.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: owner.token, headers: inTeam(team.id) });
    expect(upload.status).toBe(200);
    const generated = await request(h.baseUrl, '/api/ai-image-simple', {
      token: member.token,
      headers: inTeam(team.id),
      json: { workflow: 'ENHANCED_IMAGE_EDITING', context: { projectId, userIntent: 'listing', platform: 'web' }, parameters: { prompt: 'warm evening light', baseImage: upload.body.render.data.id } },
    });
    expect(generated.status).toBe(200);
    const approvalId = generated.body.result.savedImage.approvalId as string;
    const made = await makeLink(member, { title: 'Versions', itemIds: [approvalId], canDecide: true });
    const guest = await guestOf(made.body.token);
    const res = await asGuest(guest, `/items/${approvalId}/request-changes`, { guest: GUEST, request: 'Add people on the terrace' });
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('changes_requested');
    expect((await h.knex('pending_approvals').where({ id: approvalId }).first('status')).status).toBe('rejected');
    const deadline = Date.now() + 90_000;
    let next: { id: string; version: number } | undefined;
    while (!next && Date.now() < deadline) {
      next = await h.knex('pending_approvals').where({ previous_approval_id: approvalId }).first('id', 'version');
      if (!next) await new Promise((r) => setTimeout(r, 250));
    }
    expect(next?.version).toBe(2);
    const view = await asGuest(guest, '');
    expect(view.body.items.map((i: { id: string; version: number }) => [i.id, i.version])).toEqual([[next!.id, 2]]);
    expect((await webhookEvents(team.id, 'review.decided')).filter((d) => d.approvalId === approvalId)).toEqual([expect.objectContaining({ outcome: 'changes_requested' })]);
  }, 120_000);
});
