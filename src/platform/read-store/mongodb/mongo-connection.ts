import { MongoClient, type MongoClientOptions } from 'mongodb';

/** Database used when MONGODB_URL names none (the driver's own default would be `test`). */
export const DEFAULT_MONGO_DATABASE = 'http_monitor';

/**
 * The MongoDB driver's verdict on a connection string: null when it accepts it (replica sets with
 * several hosts, `mongodb+srv://` included), otherwise the driver's own message. Nothing connects.
 */
export function mongoUrlProblem(url: string): string | null {
  try {
    new MongoClient(url);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * The database a connection string names in its path (`mongodb://h1,h2/<db>?...`), else ours.
 * The driver falls back to `test` and does not say whether the URL named it, so the path is read
 * here: the host list ends at the first `/` or `?` after the scheme (the driver refuses unescaped
 * `/` and `?` in credentials, and a URL reaches this point only once the driver accepted it).
 */
export function mongoDatabaseName(url: string): string {
  const afterScheme = url.slice(url.indexOf('://') + 3);
  const query = afterScheme.indexOf('?');
  const authorityAndPath = query === -1 ? afterScheme : afterScheme.slice(0, query);
  const slash = authorityAndPath.indexOf('/');
  const path = slash === -1 ? '' : decodeURIComponent(authorityAndPath.slice(slash + 1));
  return path === '' ? DEFAULT_MONGO_DATABASE : path;
}

/** A client (not yet connected) and the database name every MongoDB adapter uses for this URL. */
export function mongoClientFor(url: string, options: MongoClientOptions, dbName?: string): { client: MongoClient; dbName: string } {
  return { client: new MongoClient(url, options), dbName: dbName ?? mongoDatabaseName(url) };
}
