export {
  type BodyMaker,
  BodyMakerError,
  type BodyRequest,
  createBodyMaker,
  type Framing,
  type PreparedBody,
} from './body-maker.js';
