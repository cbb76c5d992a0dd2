import { logger } from '../utils/logger';

export class PaymentValidator {
  validate(payment: PaymentInfo): ValidationResult {
    logger.debug('Validating payment info');

    // Check card number
    if (!payment.cardNumber || !this.isValidCardNumber(payment.cardNumber)) {
      return { valid: false, error: 'Invalid card number' };
    }

    // Check expiry
    if (!payment.expiry || !this.isValidExpiry(payment.expiry)) {
      return { valid: false, error: 'Invalid expiry date' };
    }

    // Check CVV
    if (!payment.cvv || !this.isValidCVV(payment.cvv)) {
      return { valid: false, error: 'Invalid CVV' };
    }

    return { valid: true };
  }

  private isValidCardNumber(cardNumber: string): boolean {
    // Luhn algorithm check
    const digits = cardNumber.replace(/\D/g, '');
    if (digits.length < 13 || digits.length > 19) {
      return false;
    }
    return this.luhnCheck(digits);
  }

  private isValidExpiry(expiry: string): boolean {
    const match = expiry.match(/^(\d{2})\/(\d{2})$/);
    if (!match) return false;

    const month = parseInt(match[1], 10);
    const year = parseInt(match[2], 10) + 2000;

    if (month < 1 || month > 12) return false;

    const now = new Date();
    const expiryDate = new Date(year, month, 0);
    return expiryDate > now;
  }

  private isValidCVV(cvv: string): boolean {
    return /^\d{3,4}$/.test(cvv);
  }

  private luhnCheck(digits: string): boolean {
    let sum = 0;
    let isEven = false;

    for (let i = digits.length - 1; i >= 0; i--) {
      let digit = parseInt(digits[i], 10);

      if (isEven) {
        digit *= 2;
        if (digit > 9) digit -= 9;
      }

      sum += digit;
      isEven = !isEven;
    }

    return sum % 10 === 0;
  }
}
