import type { ReactElement } from 'react';
import { commentTextParts } from '../../../../domain/comments';

/**
 * A comment's text as text: line breaks kept, http(s) links as links that open apart (no referrer, no follow), and
 * "@Name" of a mentioned member marked. Nothing of it is ever read as HTML.
 */
export function CommentText({ body, mentions }: { body: string; mentions: ReadonlyArray<{ userId: string; name: string }> }): ReactElement {
  return (
    <p className="comment-text">
      {commentTextParts(body, mentions).map((part, i) => {
        if (part.kind === 'link') {
          return (
            <a key={i} href={part.href} target="_blank" rel="noopener noreferrer nofollow ugc">
              {part.text}
            </a>
          );
        }
        if (part.kind === 'mention') {
          return (
            <strong key={i} className="comment-mention">
              {part.text}
            </strong>
          );
        }
        return <span key={i}>{part.text}</span>;
      })}
    </p>
  );
}
