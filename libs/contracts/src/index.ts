export * from './chat.ts';
export * from './envelopes.ts';
export * from './errors.ts';
export * from './frames.ts';
export * from './http.ts';
export * from './roles.ts';
export * from './subjects.ts';
export * from './time.ts';
