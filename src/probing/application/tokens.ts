export const HTTP_PROBER = Symbol('HTTP_PROBER');
