#import "InvoiceFormatter.h"

static NSString *const kCurrencyCode = @"EUR";

@interface InvoiceFormatter ()
@property (nonatomic, strong) NSNumberFormatter *numbers;
@property (nonatomic, assign) NSUInteger formatted;
@end

@implementation InvoiceFormatter

- (instancetype)init {
    self = [super init];
    if (self) {
        _numbers = [[NSNumberFormatter alloc] init];
        _numbers.numberStyle = NSNumberFormatterCurrencyStyle;
        _numbers.currencyCode = kCurrencyCode;
    }
    return self;
}

- (NSString *)summaryForLines:(NSArray<NSDictionary *> *)lines
                     discount:(double)discount {
    double total = 0.0;
    NSMutableArray<NSString *> *parts = [NSMutableArray array];
    for (NSDictionary *line in lines) {
        NSInteger quantity = [line[@"quantity"] integerValue];
        double price = [line[@"price"] doubleValue];
        if (quantity <= 0) {
            continue;
        }
        total += quantity * price;
        [parts addObject:[NSString stringWithFormat:@"%ld x %@", (long)quantity, line[@"name"]]];
    }
    if (discount > 0.5) {
        NSLog(@"suspicious discount %.2f", discount);
    }
    total *= 1.0 - discount;
    self.formatted += 1;
    NSString *amount = [self.numbers stringFromNumber:@(total)];
    return [NSString stringWithFormat:@"%@ = %@", [parts componentsJoinedByString:@", "], amount];
}

- (BOOL)isEmpty:(NSArray *)lines {
    return lines.count == 0;
}

+ (instancetype)sharedFormatter {
    static InvoiceFormatter *shared = nil;
    static dispatch_once_t once;
    dispatch_once(&once, ^{
        shared = [[self alloc] init];
    });
    return shared;
}

@end
