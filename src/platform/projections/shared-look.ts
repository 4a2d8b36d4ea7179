/**
 * A `scope` for `ReadStore.stamps` shared by read-only requests that arrive together: every
 * caller that asks before the event loop's next check phase gets the same object, handed out in
 * that phase. The look at other processes' commits is taken at the first `stamps` call with it,
 * so after every one of those requests arrived: each still sees every write acknowledged before
 * it was sent, and a burst of requests read in one turn of the loop pays for one look (with
 * SQLite, a `PRAGMA data_version`: a read transaction and its file locks) instead of one each.
 * Not for work that writes and then reads its own write (it needs a look of its own).
 */
export class SharedLook {
  private next: Promise<object> | null = null;

  scope(): Promise<object> {
    this.next ??= new Promise((resolve) =>
      setImmediate(() => {
        this.next = null;
        resolve({});
      }),
    );
    return this.next;
  }
}
