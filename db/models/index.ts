export { BaseModel } from './BaseModel';
export { Project } from './Project';
export { Render } from './Render';
export { Image } from './Image';
export { Clip } from './Clip';
export { CompiledVideo } from './CompiledVideo';
export { GeneratedContent } from './GeneratedContent';
