import { checkModel } from '@api/features/builder/provider-choice';
import { AppError } from '@shared/errors';

const provider = { name: 'Local', defaultModel: 'small', models: ['large'] };

describe('the model a builder session may choose', () => {
  it('is the provider’s default or one it lists', () => {
    expect(() => checkModel(provider, 'small')).not.toThrow();
    expect(() => checkModel(provider, 'large')).not.toThrow();
    expect(() => checkModel({ ...provider, models: undefined }, 'small')).not.toThrow();
  });

  it('refuses any other, naming the models it may be', () => {
    let refused: unknown;
    try {
      checkModel(provider, 'huge');
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'The provider Local offers small, large, not huge.',
      details: { model: 'huge', allowed: ['small', 'large'] },
    });
  });
});
