import type { Codec } from './codec.js';

export const noCompression: Codec = {
  name: 'none',
  extension: '',
  contentType: undefined,
  compress: async (data) => data,
  close: async () => {},
};
