/** The admin CLI's whole numbers: decimal digits only, within the option's range, never rounded or reinterpreted. */
import { wholeNumber } from '../../server/cli/args';

const amount = wholeNumber(1, 1_000_000_000);

it.each(['1', '50', '10_000', '1000000000'])('takes %j as written', (value) => {
  expect(amount(value)).toBe(Number(value.replace(/_/g, '')));
});

it.each(['0', '1000000001', '2147483648', '9007199254740993', '0x10', '1e3', '-5', '+5', ' 5', '5.0', '1_', '', 'NaN'])(
  'refuses %j naming the range',
  (value) => {
    expect(() => amount(value)).toThrow('expected a whole number from 1 to 1,000,000,000');
  },
);
