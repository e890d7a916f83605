/** An image thread module (activities/imageThreadEntry.ts) that fails while loading, before it is ready: a thread that cannot start. */
throw new Error('this image thread cannot start');
