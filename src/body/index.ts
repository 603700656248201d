export {
  type BatchContents,
  type BodyMaker,
  BodyMakerError,
  type BodyRequest,
  createBodyMaker,
  needsWorker,
  type PreparedBody,
  type RecordFrame,
  type ReturnedContents,
} from './body-maker.js';
