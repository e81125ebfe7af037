-- | Monthly payroll: gross pay, deductions and payslips.
module Payroll
  ( Employee (..)
  , payslip
  , totalCost
  ) where

import qualified Data.Map.Strict as Map
import Text.Printf (printf)

data Employee = Employee
  { name :: String
  , hourlyRate :: Double
  , hours :: Double
  , department :: String
  } deriving (Show)

overtimeThreshold :: Double
overtimeThreshold = 160

grossPay :: Employee -> Double
grossPay e
  | hours e <= overtimeThreshold = hours e * hourlyRate e
  | otherwise = overtimeThreshold * hourlyRate e + extra * hourlyRate e * 1.5
  where
    extra = hours e - overtimeThreshold

payslip :: Double -> Employee -> String
payslip taxRate employee =
  let gross = grossPay employee
      tax = gross * taxRate
      pension = min 500 (gross * 0.05)
      net = gross - tax - pension
      flag = if net < 1000 then " (below minimum)" else ""
   in concat
        [ name employee
        , ": gross "
        , printf "%.2f" gross
        , ", tax "
        , printf "%.2f" tax
        , ", net "
        , printf "%.2f" net
        , flag
        ]

totalCost :: [Employee] -> Map.Map String Double
totalCost = foldr add Map.empty
  where
    add e = Map.insertWith (+) (department e) (grossPay e)

main :: IO ()
main = mapM_ (putStrLn . payslip 0.3) []
