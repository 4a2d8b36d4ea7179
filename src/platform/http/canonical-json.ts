type Task = { text: string } | { value: unknown };

const isLeaf = (value: unknown) => value === null || typeof value !== 'object';

/**
 * JSON with object keys sorted at every level: equal documents give equal strings. Iterative
 * (an explicit stack, not recursion), so no nesting depth can overflow the call stack.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const stack: Task[] = [{ value }];
  while (stack.length > 0) {
    const task = stack.pop()!;
    if ('text' in task) {
      out.push(task.text);
      continue;
    }
    const current = task.value;
    const tasks: Task[] = [];
    if (Array.isArray(current)) {
      if (current.every(isLeaf)) {
        // Arrays of plain values (the common bulk case) in one native call.
        out.push(JSON.stringify(current.map((item) => (item === undefined ? null : item))));
        continue;
      }
      tasks.push({ text: '[' });
      current.forEach((item, index) => {
        if (index > 0) tasks.push({ text: ',' });
        tasks.push({ value: item });
      });
      tasks.push({ text: ']' });
    } else if (current !== null && typeof current === 'object') {
      const record = current as Record<string, unknown>;
      const keys = Object.keys(record)
        .sort()
        .filter((key) => record[key] !== undefined);
      tasks.push({ text: '{' });
      keys.forEach((key, index) => {
        tasks.push({ text: `${index > 0 ? ',' : ''}${JSON.stringify(key)}:` });
        tasks.push({ value: record[key] });
      });
      tasks.push({ text: '}' });
    } else {
      out.push(JSON.stringify(current) ?? 'null');
      continue;
    }
    for (let i = tasks.length - 1; i >= 0; i--) stack.push(tasks[i]);
  }
  return out.join('');
}
