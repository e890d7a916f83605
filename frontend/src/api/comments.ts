import type { CommentPin, CommentThreadList, CommentThreadView } from '../../../domain/comments';
import type { ItemHistoryEntry } from '../../../domain/itemHistory';
import { api } from './client';

export type { CommentPin, CommentThreadList, CommentThreadView };
export type { CommentView } from '../../../domain/comments';
export type { ItemHistoryEntry };

const item = (itemId: string) => `content/${encodeURIComponent(itemId)}/comments`;
const thread = (threadId: string, action: string) => `comments/threads/${encodeURIComponent(threadId)}/${action}`;

/** GET /api/content/{id}/comments: the item's threads, oldest first. */
export async function fetchCommentThreads(itemId: string, signal?: AbortSignal): Promise<CommentThreadList> {
  return api.get(item(itemId), { signal }).json<CommentThreadList>();
}

// writes are not repeated by the client (a retried POST would post the comment twice)
export async function openCommentThread(itemId: string, input: { body: string; pin?: CommentPin | null }): Promise<CommentThreadView> {
  return (await api.post(item(itemId), { json: input, retry: 0 }).json<{ thread: CommentThreadView }>()).thread;
}

export async function replyToThread(threadId: string, body: string): Promise<CommentThreadView> {
  return (await api.post(thread(threadId, 'replies'), { json: { body }, retry: 0 }).json<{ thread: CommentThreadView }>()).thread;
}

export async function setThreadResolved(threadId: string, resolved: boolean): Promise<CommentThreadView> {
  return (await api.post(thread(threadId, resolved ? 'resolve' : 'reopen'), { retry: 0 }).json<{ thread: CommentThreadView }>()).thread;
}

export async function editComment(commentId: string, body: string): Promise<CommentThreadView> {
  return (await api.patch(`comments/${encodeURIComponent(commentId)}`, { json: { body }, retry: 0 }).json<{ thread: CommentThreadView }>()).thread;
}

export async function deleteComment(commentId: string): Promise<CommentThreadView | null> {
  return (await api.delete(`comments/${encodeURIComponent(commentId)}`, { retry: 0 }).json<{ thread: CommentThreadView | null }>()).thread;
}

/** GET /api/content/{id}/history: who did what to the item, oldest first. */
export async function fetchItemHistory(itemId: string, signal?: AbortSignal): Promise<ItemHistoryEntry[]> {
  return (await api.get(`content/${encodeURIComponent(itemId)}/history`, { signal }).json<{ history: ItemHistoryEntry[] }>()).history;
}
