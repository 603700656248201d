export {
  type BodyMaker,
  BodyMakerError,
  type BodyRequest,
  createBodyMaker,
  type PreparedBody,
} from './body-maker.js';
