export {
  type BatchContents,
  type BodyMaker,
  BodyMakerError,
  type BodyRequest,
  createBodyMaker,
  needsWorker,
  type PreparedBody,
} from './body-maker.js';
